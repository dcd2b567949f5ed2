"""A bounded sample of a Scylla task's runs, for the whole-task statistics its refresh draws.

A Scylla board's whole-task figures (the variant board's rank intervals, the variant ladder,
the comparison by variant) resample each variant's runs: bootstraps and permutation tests whose
cost grows with the runs times the resamples, after every run was read and decoded. Up to
`SAMPLED_RUNS` runs per variant they are drawn over every run, as they always were. Above it
they are drawn over a sample: each variant's runs ordered by their content digest (a hash of
what the run sent, so the sample is the same for the same runs whatever order they came in,
and unrelated to their scores) and the first `SAMPLED_RUNS` kept; only those are read and
decoded. What must stay whole-task is counted over every run in SQL (`RunCounts`: each
variant's runs, its declared plan, the task's worst cost and time), so a variant's plan and
its peers are judged on all its runs. The figures say so: the board's figures carry how many
runs the task has and how many they were drawn over, each sampled variant its whole count
(docs/statistics.md, "Whole-task figures at scale").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from dataclasses import dataclass

from sqlalchemy import ColumnElement, and_, case, exists, func, select
from sqlalchemy.orm import Session, aliased

from evalq.read.run_counts import RunCounts
from evalq.read.view import TaskContext, TaskView, view_from
from evalq.store.chunks import chunks
from evalq.store.models import EvaluationRow, StandingRow, SubmissionRow
from evalq.store.models import EvaluationRow as E
from evalq.store.models import SubmissionRow as S
from evalq.store.queries import EVALUATED, evaluations_of
from evalq.store.standings import Kept

SAMPLED_RUNS = 500
"""Most runs per variant a Scylla board's whole-task statistics are drawn over. At 500 a side
a permutation test of two mean composites already separates means about 0.04 apart (composites
spread by ~0.2); more runs cost time in proportion (reading and decoding them, then every
resample) and tell little more. The sample makes intervals wider, never narrower."""


@dataclass(frozen=True)
class Sample:
    """The runs a Scylla board's whole-task statistics are drawn over, when not all of them.

    Attributes:
        ids: the sampled runs' ids, sorted (copies of earlier runs never among them).
        counts: the plans' counts over every run of the task.
        runs: the task's evaluated runs that are not copies (held ones included).
        per_variant: the most runs sampled per variant.
    """

    ids: list[str]
    counts: RunCounts
    runs: int
    per_variant: int

    @property
    def note(self) -> str:
        """The rule in words, for the figures drawn over it."""
        return (
            f"drawn over a seeded sample of {len(self.ids):,} of the task's {self.runs:,} runs "
            f"(at most {self.per_variant:,} per variant, each variant's runs in the order of "
            "their content digest), each variant's plan and peers judged on all its runs"
        )


def _kept(task_id: str, copies: Collection[str]) -> list[ColumnElement[bool]]:
    found: list[ColumnElement[bool]] = [S.task_id == task_id, S.status.in_(EVALUATED)]
    if copies:
        found.append(S.id.not_in(sorted(copies)))
    return found


def run_counts(
    session: Session,
    *,
    task_id: str,
    copies: Collection[str] = (),
    kept: Kept | None = None,
    include_held: bool = False,
) -> RunCounts:
    """`RunCounts` of the task's evaluated runs that are not ``copies``, in one grouped
    statement over narrow columns (no run's document is decoded); with ``kept``, of the runs
    a filtered board ranks (`Kept.ranked`) only."""
    variant = E.scores[("scylla", "variant")].as_string()
    held = and_(S.review.is_not(None), S.review == "flagged")
    rows = session.execute(
        select(
            S.variant,
            func.count(),
            func.sum(case((held, 0), else_=1)),
            func.max(S.planned_runs),
            func.max(E.scores[("scylla", "cost_usd")].as_float()),
            func.max(E.scores[("scylla", "duration_seconds")].as_float()),
        )
        .join(E, E.submission_id == S.id)
        .where(*_kept(task_id, copies), variant.is_not(None), *_ranked(kept, include_held))
        .group_by(S.variant)
    ).all()
    sent: dict[str, int] = {}
    counted: dict[str, int] = {}
    declared: dict[str, int] = {}
    costs, times = [], []
    for name, runs, not_held, planned, cost, duration in rows:
        if name is not None:
            sent[name], counted[name] = int(runs), int(not_held or 0)
            if planned:
                declared[name] = int(planned)
        costs += [] if cost is None else [float(cost)]
        times += [] if duration is None else [float(duration)]
    return RunCounts(
        sent, counted, declared, max(costs) if costs else None, max(times) if times else None
    )


def _ranked(kept: Kept | None, include_held: bool) -> list[ColumnElement[bool]]:
    """``kept``'s conditions on a run, as a correlated probe of its standing (none without)."""
    if kept is None:
        return []
    r = aliased(StandingRow)
    return [
        exists(
            select(r.submission_id).where(
                r.submission_id == S.id, *kept.ranked(include_held=include_held, r=r)
            )
        )
    ]


def sample_of(
    session: Session,
    *,
    task_id: str,
    copies: Collection[str] = (),
    per_variant: int | None = None,
) -> Sample | None:
    """The sample a Scylla board's statistics are drawn over (module docstring); None when no
    variant has more than ``per_variant`` runs (default `SAMPLED_RUNS`): they are drawn over
    every run."""
    per_variant = SAMPLED_RUNS if per_variant is None else per_variant
    counts = run_counts(session, task_id=task_id, copies=copies)
    if max(counts.sent.values(), default=0) <= per_variant:
        return None
    order = (
        func.row_number()
        .over(partition_by=S.variant, order_by=(S.content_hash, S.id))
        .label("position")
    )
    ranked = (
        select(S.id.label("id"), order)
        .join(E, E.submission_id == S.id)
        .where(*_kept(task_id, copies))
        .subquery()
    )
    ids = list(
        session.scalars(
            select(ranked.c.id).where(ranked.c.position <= per_variant).order_by(ranked.c.id)
        )
    )
    runs = session.scalar(
        select(func.count())
        .select_from(S)
        .join(E, E.submission_id == S.id)
        .where(*_kept(task_id, copies))
    )
    return Sample(ids, counts, int(runs or 0), per_variant)


def sampled_view(session: Session, context: TaskContext, sample: Sample) -> TaskView:
    """The task's view over the sampled runs only (each read and scored as `view_of` does),
    carrying the whole task's counts."""
    loaded: dict[str, tuple[SubmissionRow, EvaluationRow]] = {}
    for chunk in chunks(sample.ids):
        loaded |= evaluations_of(session, submission_ids=chunk)
    view = view_from(context, [loaded[sid] for sid in sample.ids if sid in loaded])
    return dataclasses.replace(view, counts=sample.counts)
