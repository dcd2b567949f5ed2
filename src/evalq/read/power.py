"""`evalq plan TASK --detect D` / GET /v1/tasks/{id}/plan: how many runs a comparison needs.

The noise is the task's own: the standard deviation of its runs' ranking score within a group
(a variant on a Scylla task, else an agent: tool and model), pooled over the groups with two or
more runs. Two groups compared run against run differ by the difference of two independent
runs, so the paired differences' standard deviation is ``sqrt(2)`` times that (runs paired by
a shared seed or scenario differ less: the count is then an upper bound). Held runs, copies
and partial evaluations are left out, as every comparison leaves them out. When no group has
two runs, the spread across all runs stands in (it holds the differences between agents too,
so it overstates the noise and the count), and the plan says so.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Literal

from sqlalchemy.orm import Session

from evalq.core.errors import InvalidInput
from evalq.core.power import PowerPlan, Spread
from evalq.core.profile import Profile
from evalq.core.settings import Settings
from evalq.read.view import ScoredRow, TaskView, task_view
from evalq.scoring.kinds import KindRule, ranking_value
from evalq.stats.power import POWER, pairs_needed, sign_flip_floor


def group_key(row: ScoredRow, rule: KindRule) -> str:
    """The group a run counts in for planning: its variant on a Scylla task, else its agent."""
    if rule.kind == "scylla" and row.submission.variant is not None:
        return row.submission.variant
    return f"{row.submission.tool} / {row.submission.model}"


def default_detect(profile: Profile, rule: KindRule) -> tuple[float, Literal["profile", "default"]]:
    """The profile's ``power.detect``, else a tenth of the kind's score scale."""
    if profile.power.detect is not None:
        return profile.power.detect, "profile"
    low, high = rule.scale
    return (high - low) / 10, "default"


def pooled_sd(groups: Sequence[Sequence[float]]) -> tuple[float | None, Spread]:
    """The standard deviation pooled over groups of two or more values, else that of all the
    values together, else None."""
    squares, df = 0.0, 0
    for values in groups:
        if len(values) >= 2:
            mean = sum(values) / len(values)
            squares += sum((v - mean) ** 2 for v in values)
            df += len(values) - 1
    if df > 0:
        return math.sqrt(squares / df), "within groups"
    every = [v for values in groups for v in values]
    if len(every) < 2:
        return None, "none"
    mean = sum(every) / len(every)
    return math.sqrt(sum((v - mean) ** 2 for v in every) / (len(every) - 1)), "across runs"


def plan_view(view: TaskView, *, detect: float | None = None) -> PowerPlan:
    """The power plan of a task already loaded (`evalq.read.view.task_view`).

    Raises:
        InvalidInput: on ``detect`` when it is not a finite number above 0.
    """
    if detect is not None and not (math.isfinite(detect) and detect > 0):
        raise InvalidInput([("detect", "a number above 0 (the difference to detect)")])
    rule, profile = view.rule, view.profile
    source: Literal["request", "profile", "default"] = "request"
    if detect is None:
        detect, source = default_detect(profile, rule)
    alpha = round(1 - profile.arena.confidence_level, 12)
    grouped: dict[str, list[float]] = defaultdict(list)
    for row in view.rows:
        value = ranking_value(rule, row.values)
        if row.held or row.values.partial or value is None:
            continue
        grouped[group_key(row, rule)].append(value)
    sd, spread = pooled_sd(list(grouped.values()))
    floor = sign_flip_floor(alpha)
    counted = sum(len(v) for v in grouped.values())
    by: Literal["variant", "agent"] = "variant" if rule.kind == "scylla" else "agent"
    if sd is None:
        runs, sd_difference = None, None
        note = f"{counted} run(s) counted: at least two are needed to measure the noise"
    else:
        sd_difference = math.sqrt(2) * sd
        runs = pairs_needed(sd=sd_difference, detect=detect, alpha=alpha, power=POWER)
        shown = "more than 100,000" if runs is None else f"{runs}"
        note = (
            f"{shown} runs per {by} to detect a difference of {detect:g} in {rule.ranking_key} "
            f"with {POWER:.0%} power at alpha {alpha:g} (run sd {sd:.4g}, {spread}, "
            f"{counted} runs in {len(grouped)} {by}s)"
        )
        if spread == "across runs":
            note += "; no group has two runs, so the spread of all runs stands in and "
            note += "the count is likely too high"
    return PowerPlan(
        task_id=view.task.id,
        score=rule.ranking_key,
        groups_by=by,
        detect=detect,
        detect_source=source,
        alpha=alpha,
        power=POWER,
        runs_counted=counted,
        groups=len(grouped),
        spread=spread,
        sd=sd,
        sd_difference=sd_difference,
        runs=runs,
        floor=floor,
        note=note,
    )


def underpowered_note(plan: PowerPlan, have: int) -> str | None:
    """ "underpowered: ..." when ``have`` runs (or pairs) a side are fewer than the plan's."""
    if plan.runs is None and plan.sd is None:
        return None
    if plan.runs is not None and have >= plan.runs:
        return None
    needed = "more than 100,000" if plan.runs is None else str(plan.runs)
    return (
        f"underpowered: {have} per side; detecting {plan.detect:g} with {plan.power:.0%} "
        f"power at alpha {plan.alpha:g} needs {needed} (evalq plan {plan.task_id})"
    )


def task_plan(
    session: Session, *, task_id: str, detect: float | None = None, settings: Settings | None = None
) -> PowerPlan:
    """The power plan of ``task_id`` read from the store (what every door serves).

    Raises:
        NotFound: no such task.
        InvalidInput: on ``detect``, as `plan_view`.
    """
    if detect is not None and not (math.isfinite(detect) and detect > 0):
        raise InvalidInput([("detect", "a number above 0 (the difference to detect)")])
    return plan_view(task_view(session, task_id=task_id, settings=settings), detect=detect)
