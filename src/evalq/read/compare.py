"""`evalq compare` / GET /v1/compare: two or more groups of submissions compared over the store.

The groups are the values of one field (``model``, ``tool``, ``variant`` or ``metadata.KEY``)
among the evaluated submissions of the tasks named. Every submission is scored by its task's
own ranking score, exactly as its leaderboard shows it (`evalq.read.leaderboard`); a suite
task's submissions are compared scenario by scenario (scenario score, scenario passed), so
their pairs are scenarios. Tasks must share one ranking score: an Arena overall (0-100) and a
PeerRead composite (0-1) are not one scale. Partial evaluations (a tier failed) are left out
and counted. The statistics are `evalq.scoring.contrast`; a single Scylla task compared by
variant also carries the complete variant analysis (`evalq.scoring.worth`).
"""

from __future__ import annotations

import fnmatch
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, get_args

from sqlalchemy import select
from sqlalchemy.orm import Session

from evalq.core.errors import InvalidInput
from evalq.core.metadata import KEY_RULE, as_text, valid_key
from evalq.core.profile import profile_named
from evalq.core.results import EvaluationScores
from evalq.core.schemas import STORED, Submission
from evalq.core.settings import Settings
from evalq.read.leaderboard import leaderboard
from evalq.read.variants import variant_runs
from evalq.scoring.comparison import RESAMPLES, SEED, Correction
from evalq.scoring.contrast import GroupContrast, Observation, contrast
from evalq.scoring.suite.scenario import scenario_passed, scenario_score
from evalq.scoring.variants import natural_order
from evalq.scoring.worth import VariantAnalysis, analyse_variants
from evalq.store import queries
from evalq.store.models import TaskRow

FIELDS = ("model", "tool", "variant")
MAX_RESAMPLES = 100_000
"""Most bootstrap resamples one comparison may ask for (the default is 2,000)."""
BY_RULE = "one of model, tool, variant, or metadata.KEY"


@dataclass(frozen=True)
class Comparison:
    """The answer to "is B better than A on these tasks, by how much, how sure".

    Attributes:
        tasks: the tasks compared, by id.
        not_evaluated: tasks named that have no evaluated submission yet (left out).
        kind / ranking_key: what the tasks rank by.
        score: the score compared: the ranking score, or a suite's ``scenario_score``.
        unit: what pairs: ``task``, or ``scenario`` for suite tasks.
        by: the field that makes the groups.
        contrast: the comparisons with the reference group and the per-unit values.
        left_out: submissions of the compared groups that were not compared, counted by group
            and reason (``{"group", "reason", "count"}``).
        variants: the variant analysis of a single Scylla task compared by variant, else None.
    """

    tasks: tuple[str, ...]
    not_evaluated: tuple[str, ...]
    kind: str
    ranking_key: str
    score: str
    unit: str
    by: str
    contrast: GroupContrast
    left_out: tuple[dict[str, Any], ...]
    variants: VariantAnalysis | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "tasks": list(self.tasks),
            "not_evaluated": list(self.not_evaluated),
            "kind": self.kind,
            "ranking_key": self.ranking_key,
            "score": self.score,
            "unit": self.unit,
            "by": self.by,
            **self.contrast.to_dict(),
            "left_out": list(self.left_out),
            "variants": None if self.variants is None else self.variants.to_dict(),
        }


def resolve_tasks(session: Session, pattern: str) -> list[str]:
    """The task ids ``pattern`` names: an id, ids separated by commas, or globs (``arena-*``).

    Raises:
        InvalidInput: on ``tasks`` when a name or glob matches no task.
    """
    known = list(session.scalars(select(TaskRow.id).order_by(TaskRow.id)))
    chosen: list[str] = []
    missing = []
    for name in (p.strip() for p in pattern.split(",")):
        if name in known:  # an id is itself, even if it holds glob characters
            hits = [name]
        else:
            hits = [t for t in known if fnmatch.fnmatchcase(t, name)] if name else []
        if not hits:
            missing.append(name)
        chosen += [t for t in hits if t not in chosen]
    if missing:
        raise InvalidInput([("tasks", f"no task matches {', '.join(repr(m) for m in missing)}")])
    return chosen


def _group_of(by: str, submission: Submission) -> str | None:
    if by in FIELDS:
        value = getattr(submission, by)
        return None if value is None else str(value)
    key = by.removeprefix("metadata.")
    return as_text(submission.metadata[key]) if key in submission.metadata else None


def _check_by(by: str) -> None:
    if by in FIELDS:
        return
    if not by.startswith("metadata."):
        raise InvalidInput([("by", BY_RULE)])
    if not valid_key(by.removeprefix("metadata.")):
        raise InvalidInput([("by", KEY_RULE)])


@dataclass(frozen=True)
class _Gathered:
    observations: list[Observation]
    kinds: dict[str, str]
    keys: dict[str, str]
    left_out: Counter[tuple[str, str]]
    present: set[str]
    evaluated: list[str]


def _gather(
    session: Session, tasks: Sequence[str], by: str, settings: Settings | None
) -> _Gathered:
    observations = []
    kinds, keys = {}, {}
    left_out: Counter[tuple[str, str]] = Counter()
    present: set[str] = set()
    evaluated = []
    for task_id in tasks:
        board = leaderboard(session, task_id=task_id, settings=settings, rank_intervals=False)
        if not board.entries:  # its kind may be derived from runs it does not have yet
            continue
        evaluated.append(task_id)
        kinds[task_id], keys[task_id] = board.kind, board.ranking_key
        entries = {e.submission_id: e for e in board.entries}
        profile = profile_named(queries.get_task(session, task_id=task_id).profile, settings)
        for row, evaluation in queries.task_evaluations(session, task_id=task_id):
            submission = Submission.model_validate(row.payload, context=STORED)
            group = _group_of(by, submission)
            if group is None:
                continue
            present.add(group)
            entry = entries[row.id]
            if entry.partial:
                left_out[(group, "partial evaluation")] += 1
                continue
            if board.kind == "suite" and submission.scenarios:
                observations += [
                    Observation(
                        f"{task_id}/{s.id}",
                        group,
                        scenario_score(s),
                        scenario_passed(s, profile.suite),
                    )
                    for s in submission.scenarios
                ]
                continue
            if entry.ranking_value is None:
                left_out[(group, f"no {board.ranking_key}")] += 1
                continue
            scylla = EvaluationScores.model_validate(evaluation.scores).scylla
            passed = None if scylla is None else scylla.passed
            observations.append(Observation(task_id, group, entry.ranking_value, passed))
    return _Gathered(observations, kinds, keys, left_out, present, evaluated)


def _groups(
    session: Session,
    gathered: _Gathered,
    by: str,
    values: Sequence[str],
    settings: Settings | None,
) -> list[str]:
    """The groups named (every one must have a complete evaluation), or by variant every
    variant that has one, the profile's baseline variant first."""
    present = sorted(gathered.present)
    scored = {o.group for o in gathered.observations}
    named = list(dict.fromkeys(values))
    if not named and by == "variant":
        ordered = sorted(scored, key=natural_order)
        baselines = {
            profile_named(
                queries.get_task(session, task_id=t).profile, settings
            ).scylla.baseline_variant
            for t in gathered.evaluated
        }
        first = next((v for v in ordered if v in baselines), None)
        named = ([first] if first else []) + [v for v in ordered if v != first]
        if len(named) < 2:
            rule = f"fewer than two variants have a complete evaluation; present: {present}"
            raise InvalidInput([("values", rule)])
    if len(named) < 2:
        raise InvalidInput(
            [("values", f"name two or more {by} values to compare; present: {present}")]
        )
    absent = [v for v in named if v not in scored]
    if absent:
        raise InvalidInput(
            [("values", f"no complete evaluation has {by} {absent}; present: {present}")]
        )
    return named


def _check_method(correction: str, alpha: float, level: float | None, resamples: int) -> None:
    problems = []
    if correction not in get_args(Correction):
        problems.append(("correction", f"one of {', '.join(get_args(Correction))}"))
    if not 0 < alpha < 1:
        problems.append(("alpha", "between 0 and 1"))
    if level is not None and not 0 < level < 1:
        problems.append(("level", "between 0 and 1"))
    if not 1 <= resamples <= MAX_RESAMPLES:
        problems.append(("resamples", f"from 1 to {MAX_RESAMPLES}"))
    if problems:
        raise InvalidInput(problems)


def compare(
    session: Session,
    *,
    tasks: str,
    by: str,
    values: Sequence[str] = (),
    correction: Correction = "holm",
    alpha: float = 0.05,
    level: float | None = None,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    settings: Settings | None = None,
) -> Comparison:
    """Compare the groups ``by`` makes among the evaluated submissions of ``tasks``.

    Args:
        tasks: a task id, ids separated by commas, or globs (`resolve_tasks`).
        by: ``model``, ``tool``, ``variant`` or ``metadata.KEY``.
        values: the groups, the reference first; by ``variant`` they may be left out (every
            variant, the profile's baseline variant first).
        correction / alpha: the multiple-comparison correction and its level.
        level / resamples / seed: the bootstrap intervals; ``level`` defaults to the first
            task's profile confidence level (the one its report uses).

    Raises:
        InvalidInput: on ``tasks``, ``by``, ``values``, ``correction``, ``alpha``, ``level``
            or ``resamples``, naming the rule broken.
    """
    _check_by(by)
    _check_method(correction, alpha, level, resamples)
    if not 0 <= seed < 2**32:
        raise InvalidInput([("seed", "from 0 to 2**32 - 1")])
    named = resolve_tasks(session, tasks)
    gathered = _gather(session, named, by, settings)
    task_ids = gathered.evaluated
    if not task_ids:
        raise InvalidInput([("tasks", f"no evaluated submission in {named}")])
    scores = sorted(set(gathered.keys.values()))
    if len(scores) > 1:
        raise InvalidInput(
            [("tasks", f"the tasks rank by different scores {scores}; compare tasks of one kind")]
        )
    groups = _groups(session, gathered, by, values, settings)
    kind = gathered.kinds[task_ids[0]]
    profile = profile_named(queries.get_task(session, task_id=task_ids[0]).profile, settings)
    level = profile.arena.confidence_level if level is None else level
    analysis = None
    if by == "variant" and len(task_ids) == 1 and kind == "scylla":
        runs = variant_runs(session, task_id=task_ids[0])
        analysis = analyse_variants(
            {v: runs[v] for v in groups if v in runs},
            profile.scylla,
            level=level,
            resamples=resamples,
            seed=seed,
        )
    # by default (every variant) a group left out entirely is reported too
    kept = set(groups) if values else gathered.present
    return Comparison(
        tasks=tuple(task_ids),
        not_evaluated=tuple(t for t in named if t not in task_ids),
        kind=kind,
        ranking_key=scores[0],
        score="scenario_score" if kind == "suite" else scores[0],
        unit="scenario" if kind == "suite" else "task",
        by=by,
        contrast=contrast(
            gathered.observations,
            groups,
            correction=correction,
            alpha=alpha,
            level=level,
            resamples=resamples,
            seed=seed,
        ),
        left_out=tuple(
            {"group": group, "reason": reason, "count": n}
            for (group, reason), n in sorted(gathered.left_out.items())
            if group in kept
        ),
        variants=analysis,
    )
