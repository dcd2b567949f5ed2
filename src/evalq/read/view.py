"""A task as one read sees it, loaded once and passed down (as `queries.load_job` is for a tier).

`task_context` reads the task, resolves its profile and takes its current baseline;
`task_view` adds every evaluated submission, read in one query and scored once: its Arena
scores re-scored against that baseline (`TaskContext.arena`, the one place the read side does
it), the values its kind may rank it by, and the kind's rule derived from all of them. The
leaderboard, the task reports, the report's data, a comparison and a submission's detail all
start from one of the two.

It lives in `evalq.read`, not beside `load_job` in `evalq.store`, because the baseline it needs
is the read side's (the stored snapshot, or the profile's defaults: `read.baseline`) and the
rows are scored (`evalq.scoring`), which the store does not do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from evalq.core.profile import Profile, profile_named
from evalq.core.results import ArenaScores, EvaluationScores
from evalq.core.schemas import STORED, ScenarioResult, Submission, Task
from evalq.core.settings import Settings
from evalq.read.baseline import CurrentBaseline, current_baseline
from evalq.read.run_counts import RunCounts
from evalq.scoring.arena import score_arena_run
from evalq.scoring.arena.run import ArenaRun
from evalq.scoring.arena.validation import validate_evaluation
from evalq.scoring.injection import injection_notes, stored_marks
from evalq.scoring.kinds import KindRule, RankedValues, kind_of
from evalq.scoring.review import duplicates, near_copies
from evalq.store import queries
from evalq.store.models import EvaluationRow, SubmissionRow, utcnow
from evalq.store.tickets import VariantTickets, tickets_of


def is_held(review: str | None) -> bool:
    """A run whose review is pending (``flagged``): held out of every statistic until accepted."""
    return review == "flagged"


@dataclass(frozen=True)
class ScoredRow:
    """One evaluated submission as every board reads it: its row, its evaluation, and the
    values its kind may rank it by (Arena re-scored against the current baseline)."""

    submission: SubmissionRow
    metadata: dict[str, Any]
    evaluation: EvaluationRow
    scores: EvaluationScores
    arena: ArenaScores
    values: RankedValues
    scenarios: list[ScenarioResult]
    warnings: list[str] = field(default_factory=list)
    """The validation rules' messages on the Arena scores above (the board's, not the ones
    the merge saw against an older baseline)."""
    injection: list[str] = field(default_factory=list)
    """Each sentence of its output that instructs its evaluator, and why, in words
    (`evalq.scoring.injection.injection_notes`): shown as a mark; the tiers read the output
    without those sentences."""

    @property
    def held(self) -> bool:
        """Held for review: flagged as an outlier and not yet accepted by a person."""
        return is_held(self.submission.review)


@dataclass(frozen=True)
class TaskContext:
    """What every read of a task starts from: the task, its profile and its current baseline."""

    task: Task
    profile: Profile
    current: CurrentBaseline
    tickets: Mapping[str, VariantTickets] = field(default_factory=dict, kw_only=True)
    """The variants that registered their runs (`evalq.store.tickets`), as at the read."""
    read_at: datetime = field(default_factory=utcnow, kw_only=True)
    """When the tickets were read: what the figures drawn from this context hold as at
    (`evalq.store.tickets.lapsed_since_drawn` compares deadlines with it)."""

    def arena(self, submission: Submission, cost_usd: float | None) -> ArenaScores:
        """A submission's Arena scores against the task's *current* baseline, from its stored
        raw figures (the baseline moves as submissions arrive; every reader sees this one)."""
        run = ArenaRun.of(submission, cost_usd)
        return score_arena_run(
            run, self.task, submission.evidence, self.current.baseline, self.profile.arena
        )

    def scored(self, sub_row: SubmissionRow, evaluation: EvaluationRow) -> ScoredRow:
        """One evaluated submission scored: Arena re-scored, the rest read as stored."""
        submission = Submission.model_validate(sub_row.payload, context=STORED)
        run = ArenaRun.of(submission, sub_row.cost_usd)
        arena = self.arena(submission, sub_row.cost_usd)
        scores = EvaluationScores.model_validate(evaluation.scores)
        # a tier failed, or the composite misses an input for another reason that is not the
        # submitter's (e.g. the judge's budget ran out before a rubric)
        partial = evaluation.status == "degraded" or bool(
            scores.peerread and scores.peerread.partial
        )
        values = RankedValues(
            partial=partial,
            arena_unadjusted=arena.unadjusted_score,
            peerread_composite=scores.peerread.composite if scores.peerread else None,
            scylla_composite=scores.scylla.composite if scores.scylla else None,
            suite_passed=scores.suite.passed if scores.suite else None,
            suite_final_score=scores.suite.final_score if scores.suite else None,
        )
        return ScoredRow(
            sub_row,
            submission.metadata,
            evaluation,
            scores,
            arena,
            values,
            submission.scenarios,
            validate_evaluation(arena, run),
            injection_notes(submission.output, stored_marks(scores)),
        )


@dataclass(frozen=True)
class TaskView(TaskContext):
    """A task with every evaluated submission scored once, and the kind's rule.

    Attributes:
        rule: the task's kind rule, derived from all of its runs (a task without ``kind``),
            whatever a reader keeps of them afterwards.
        rows: every evaluated submission (``failed`` ones left out) that counts, by
            submission id: a copy of an earlier run is not among them.
        copies: the evaluated submissions that copy an earlier run's content (another id,
            the same output, trace, usage and evidence: `evalq.scoring.review.duplicates`);
            each counts once, as the earliest, in every figure a reader computes.
        duplicate_of: ``{copy's id: id of the run it copies}``.
        near_copies: the near-copies among them (usage nudged), ``{copy: original}``.
        counts: None when ``rows`` are every run of the task; else they are a sample of its
            runs (`evalq.read.boards.sample`), and these are the plans' counts over all of
            them (a sampled variant's share of its runs: ``counts.counted``).
    """

    rule: KindRule
    rows: list[ScoredRow]
    copies: list[ScoredRow] = field(default_factory=list)
    duplicate_of: dict[str, str] = field(default_factory=dict)
    near_copies: dict[str, str] = field(default_factory=dict)
    counts: RunCounts | None = None


def task_context(
    session: Session, *, task_id: str, settings: Settings | None = None
) -> TaskContext:
    """The task, its profile (resolved once, with ``settings``) and its current baseline.

    Raises:
        NotFound: no such task.
    """
    task = queries.get_task(session, task_id=task_id)
    profile = profile_named(task.profile, settings)
    current = current_baseline(session, task_id=task_id, profile=profile)
    now = utcnow()
    tickets = tickets_of(session, task_id=task_id, now=now)
    return TaskContext(task, profile, current, tickets=tickets, read_at=now)


def task_view(session: Session, *, task_id: str, settings: Settings | None = None) -> TaskView:
    """`task_context` and every evaluated submission of the task scored, in three queries.

    Raises:
        NotFound: no such task.
    """
    return view_of(session, task_context(session, task_id=task_id, settings=settings))


def view_of(session: Session, context: TaskContext) -> TaskView:
    """The task's evaluated submissions read in one query and scored against ``context``."""
    return view_from(context, queries.task_evaluations(session, task_id=context.task.id))


def view_from(
    context: TaskContext, evaluated: Sequence[tuple[SubmissionRow, EvaluationRow]]
) -> TaskView:
    """The view of a task whose evaluated submissions were already read (``evaluated``, as
    `queries.task_evaluations` returns them), scored against ``context``."""
    rows = [context.scored(sub_row, evaluation) for sub_row, evaluation in evaluated]
    rule = kind_of(
        context.task,
        has_variants=any(r.submission.variant is not None for r in rows),
        has_scenarios=any(r.scores.suite is not None for r in rows),
    )
    facts = [queries.run_facts(r.submission) for r in rows]
    # the refresh's marks (near-copies by similarity need the payloads) and those found here
    stored = {r.submission.id: r.submission.copy_of for r in rows if r.submission.copy_of}
    copied = {**stored, **duplicates(facts)}
    return TaskView(
        context.task,
        context.profile,
        context.current,
        rule,
        [r for r in rows if r.submission.id not in copied],
        [r for r in rows if r.submission.id in copied],
        copied,
        near_copies(facts, copied),
        tickets=context.tickets,
        read_at=context.read_at,
    )
