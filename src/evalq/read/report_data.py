"""Everything a report shows, assembled from the store (no rendering here)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, get_args

from pydantic import Field
from sqlalchemy.orm import Session

from evalq.core.errors import InvalidInput
from evalq.core.profile import Recommendation
from evalq.core.settings import Settings
from evalq.read.compare import CompareReport, compare_task
from evalq.read.leaderboard import (
    CATEGORIES,
    LeaderboardEntry,
    LeaderboardReport,
    leaderboard,
)
from evalq.read.plans import planned_variant_runs, with_shortfalls
from evalq.read.reply import Reply
from evalq.read.variants import VariantsAnalysis, VariantStep, variants_analysis
from evalq.read.view import ScoredRow, TaskView, task_view
from evalq.scoring.worth import analyse_variants
from evalq.stats.bootstrap import UpliftInterval
from evalq.stats.confidence import confidence_interval

DIMENSIONS = ("overall", *CATEGORIES)
"""The Arena scores a report breaks down: the overall score and its four categories."""
RECOMMENDATIONS = (*get_args(Recommendation), "none")
"""PeerRead's labels, best first, and "none" for an entry without a composite."""


class Interval(Reply):
    """The confidence interval of one dimension's mean over the leaderboard's entries."""

    dimension: str
    mean: float | None
    low: float
    high: float
    enough_data: bool


class Run(Reply):
    """What a report needs of one submission beyond its leaderboard entry."""

    submission_id: str
    cost_usd: float | None
    execution_time: float | None


class SuiteGate(Reply):
    """One submission's suite gate and every reason it blocks (spec 004)."""

    submission_id: str
    passed: bool
    final_score: float | None
    blocking_failures: list[str]
    missing_required: list[str]
    failed_required: list[str]
    warnings: list[str]


class TierGap(Reply):
    """A tier that produced no metrics for some of a task's listed runs, and why."""

    tier: str
    status: str = Field(description="absent, skipped or failed (as `missing_tiers` stores it).")
    reason: str | None = Field(description="Why it was skipped; null when absent or failed.")
    runs: int = Field(description="How many of the board's runs it is missing for.")


def tier_gaps(rows: Sequence[ScoredRow], listed: set[str]) -> list[TierGap]:
    """The tiers missing from the stored evaluations of the ``listed`` runs, by tier, status
    and reason, most frequent first within a tier."""
    counts: Counter[tuple[str, str, str | None]] = Counter()
    for row in rows:
        if row.submission.id in listed:
            for tier, missing in (row.evaluation.missing_tiers or {}).items():
                counts[(tier, missing.get("status", "absent"), missing.get("reason"))] += 1
    return [
        TierGap(tier=tier, status=status, reason=reason, runs=runs)
        for (tier, status, reason), runs in sorted(counts.items(), key=lambda i: (i[0][0], -i[1]))
    ]


class ReportData(Reply):
    """A task's report: the leaderboard, the per-dimension intervals, costs, and variants.

    What ``evalq report --format json`` writes (``model_dump(mode="json")``) and the pages render.

    Attributes:
        task_id: the task.
        generated_at: ISO timestamp (UTC) of the assembly.
        confidence_level: the profile's Arena confidence level.
        leaderboard: the leaderboard (every evaluated submission, ranked; runs held for review
            listed after the ranked ones, unranked, unless ``include_held``).
        runs: submission id -> its cost and time as stored.
        intervals: one per `DIMENSIONS` entry, in that order.
        variants: the Scylla variant analysis (`evalq.scoring.worth`), None when no
            submission has a variant.
        uplift_intervals: variant -> the interval of its median composite's uplift over the
            baseline variant.
        suite_gates: submission id -> its suite gate, for the submissions that carry one.
        comparison: what `evalq compare` says of this task alone: by variant for a Scylla
            task, by model over a suite's scenarios (the leading model the reference); None
            for the other kinds, whose single task pairs nothing, or with fewer than 2 groups.
        recommendations: for a PeerRead task, how many ranked entries the composite
            recommends each way ("none" without one; a held run is not counted); else None.
        comparison_note: why a Scylla or suite task has no comparison (its groups could not
            be compared), else None; shown on the page, not written to the JSON.
    """

    task_id: str
    generated_at: str
    confidence_level: float
    leaderboard: LeaderboardReport
    runs: dict[str, Run]
    intervals: list[Interval]
    variants: VariantsAnalysis | None
    uplift_intervals: dict[str, UpliftInterval]
    suite_gates: dict[str, SuiteGate]
    comparison: CompareReport | None
    recommendations: dict[str, int] | None
    comparison_note: str | None = Field(default=None, exclude=True)
    tier_gaps: list[TierGap] = Field(
        default_factory=list,
        description="The tiers that did not run (or failed) for some of the listed runs.",
    )

    @property
    def steps(self) -> dict[str, VariantStep]:
        """Variant -> its step from the baseline variant (empty without a baseline)."""
        return {} if self.variants is None else {t.target: t for t in self.variants.over_baseline}

    @property
    def kind(self) -> str:
        """The task's kind (`evalq.scoring.kinds`): what the verdict is about."""
        return self.leaderboard.kind

    @property
    def entries(self) -> list[LeaderboardEntry]:
        """The leaderboard's entries, best first (held runs last, unranked)."""
        return self.leaderboard.entries

    @property
    def ranked(self) -> list[LeaderboardEntry]:
        """The ranked entries, best first: those not held for review."""
        return ranked(self.leaderboard)


def ranked(board: LeaderboardReport) -> list[LeaderboardEntry]:
    """A board's ranked entries, best first: those not held for review."""
    return [e for e in board.entries if e.rank is not None]


def recommendations(entries: Sequence[LeaderboardEntry]) -> dict[str, int]:
    """How many of ``entries`` the PeerRead composite recommends each way ("none" without
    one)."""
    counts = dict.fromkeys(RECOMMENDATIONS, 0)
    for entry in entries:
        key = entry.recommendation or "none"
        counts[key] = counts.get(key, 0) + 1
    return {k: v for k, v in counts.items() if v or k != "none"}


def dimension_intervals(entries: list[LeaderboardEntry], level: float) -> list[Interval]:
    """Student-t interval of the mean of every dimension over the ranked entries (a run held
    for review is left out; too few entries: not enough data)."""
    ranked = [e for e in entries if e.rank is not None]
    intervals = []
    for name in DIMENSIONS:
        ci = confidence_interval([float(getattr(e, name)) for e in ranked], level)
        intervals.append(
            Interval(
                dimension=name,
                mean=ci.mean,
                low=ci.low,
                high=ci.high,
                enough_data=ci.enough_data,
            )
        )
    return intervals


def suite_gates(rows: Sequence[ScoredRow]) -> dict[str, SuiteGate]:
    """The suite gate of every evaluated submission (a `TaskView`'s rows) that carries one."""
    gates = {}
    for row in rows:
        suite = row.scores.suite
        if suite is not None:
            sid = row.submission.id
            gates[sid] = SuiteGate(
                submission_id=sid,
                passed=suite.passed,
                final_score=suite.final_score,
                blocking_failures=list(suite.blocking_failures),
                missing_required=list(suite.missing_required),
                failed_required=list(suite.failed_required),
                warnings=list(suite.warnings),
            )
    return gates


def report_data(
    session: Session,
    *,
    task_id: str,
    settings: Settings | None = None,
    include_held: bool = False,
) -> ReportData:
    """Assemble a task's report from stored evaluations (raises NotFound for an unknown task).

    Runs held for review are shown apart and left out of the verdict, the intervals, the
    variant analysis and the comparison, unless ``include_held``.
    """
    view = task_view(session, task_id=task_id, settings=settings)
    # the board every door reads (`leaderboard`), whole; the rest of the report is drawn from
    # the task's runs
    board = leaderboard(
        session,
        task_id=task_id,
        settings=settings,
        include_held=include_held,
        known={r.submission.id: (r.submission, r.evaluation) for r in view.rows},
    )
    runs = {
        r.submission.id: Run(
            submission_id=r.submission.id,
            cost_usd=r.submission.cost_usd,
            execution_time=r.submission.execution_time,
        )
        for r in view.rows
    }
    by_variant, short = planned_variant_runs(
        view.rows, view.profile.scylla, include_held=include_held, tickets=view.tickets
    )
    level = view.profile.arena.confidence_level
    analysis = (
        analyse_variants(by_variant, view.profile.scylla, level=level) if by_variant else None
    )
    variants = (
        None
        if analysis is None
        else with_shortfalls(variants_analysis(analysis), short, view.tickets)
    )
    steps = [] if variants is None else variants.over_baseline
    return ReportData(
        task_id=task_id,
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        confidence_level=level,
        leaderboard=board,
        runs=runs,
        intervals=dimension_intervals(board.entries, level),
        variants=variants,
        uplift_intervals={
            t.target: t.uplift["composite"] for t in steps if "composite" in t.uplift
        },
        suite_gates=suite_gates(view.rows),
        recommendations=recommendations(ranked(board)) if board.kind == "peerread" else None,
        tier_gaps=tier_gaps(view.rows, {e.submission_id for e in board.entries}),
        **task_comparison(view, board, settings),
    )


def task_comparison(
    view: TaskView, board: LeaderboardReport, settings: Settings | None
) -> dict[str, Any]:
    """``comparison`` (and ``comparison_note``) of `ReportData`: by variant (Scylla) or by
    model over scenarios (suite); a comparison the data cannot support is said, not raised."""
    held = board.include_held
    try:
        if board.kind == "scylla":
            variants = {e.variant for e in ranked(board) if e.variant is not None}
            if len(variants) >= 2:
                found = compare_task(view, by="variant", settings=settings, include_held=held)
                return {"comparison": found}
        if board.kind == "suite":
            models = list(dict.fromkeys(e.model for e in ranked(board) if not e.partial))
            if len(models) >= 2:
                found = compare_task(
                    view,
                    by="model",
                    values=models,
                    settings=settings,
                    include_held=held,
                )
                return {"comparison": found, "comparison_note": None}
    except InvalidInput as refused:
        return {"comparison": None, "comparison_note": "; ".join(r for _, r in refused.problems)}
    return {"comparison": None, "comparison_note": None}
