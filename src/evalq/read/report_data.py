"""Everything a report shows, assembled from the store (no rendering here)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any, get_args

from sqlalchemy.orm import Session

from evalq.core.errors import InvalidInput
from evalq.core.profile import Recommendation, profile_named
from evalq.core.results import EvaluationScores
from evalq.core.settings import Settings
from evalq.read.compare import Comparison, compare
from evalq.read.leaderboard import CATEGORIES, Entry, Leaderboard, leaderboard
from evalq.read.variants import variant_runs
from evalq.scoring.bootstrap import UpliftInterval
from evalq.scoring.confidence import confidence_interval
from evalq.scoring.variants import VariantReport
from evalq.scoring.worth import Transition, VariantAnalysis, analyse_variants
from evalq.store import queries

DIMENSIONS = ("overall", *CATEGORIES)
"""The Arena scores a report breaks down: the overall score and its four categories."""
RECOMMENDATIONS = (*get_args(Recommendation), "none")
"""PeerRead's labels, best first, and "none" for an entry without a composite."""


@dataclass(frozen=True)
class Interval:
    """The confidence interval of one dimension's mean over the leaderboard's entries."""

    dimension: str
    mean: float | None
    low: float
    high: float
    enough_data: bool


@dataclass(frozen=True)
class Run:
    """What a report needs of one submission beyond its leaderboard entry."""

    submission_id: str
    cost_usd: float | None
    execution_time: float | None


@dataclass(frozen=True)
class SuiteGate:
    """One submission's suite gate and every reason it blocks (spec 004)."""

    submission_id: str
    passed: bool
    final_score: float | None
    blocking_failures: tuple[str, ...]
    missing_required: tuple[str, ...]
    failed_required: tuple[str, ...]
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class ReportData:
    """A task's report: the leaderboard, the per-dimension intervals, costs, and variants.

    Attributes:
        task_id: the task.
        generated_at: ISO timestamp (UTC) of the assembly.
        confidence_level: the profile's Arena confidence level.
        board: the leaderboard (every evaluated submission, ranked; runs held for review
            listed after the ranked ones, unranked, unless ``include_held``).
        runs: submission id -> its cost and time as stored.
        intervals: one per `DIMENSIONS` entry, in that order.
        analysis: the Scylla variant analysis (`evalq.scoring.worth`), None when no
            submission has a variant.
        suite_gates: submission id -> its suite gate, for the submissions that carry one.
        comparison: what `evalq compare` says of this task alone: by variant for a Scylla
            task, by model over a suite's scenarios (the leading model the reference); None
            for the other kinds, whose single task pairs nothing, or with fewer than 2 groups.
        comparison_note: why a Scylla or suite task has no comparison (its groups could not
            be compared), else None.
    """

    task_id: str
    generated_at: str
    confidence_level: float
    board: Leaderboard
    runs: dict[str, Run]
    intervals: list[Interval]
    analysis: VariantAnalysis | None
    suite_gates: dict[str, SuiteGate]
    comparison: Comparison | None = None
    comparison_note: str | None = None

    @property
    def variants(self) -> VariantReport | None:
        """The Scylla cross-variant report, None when no submission has a variant."""
        return None if self.analysis is None else self.analysis.report

    @property
    def steps(self) -> dict[str, Transition]:
        """Variant -> its step from the baseline variant (empty without a baseline)."""
        return {} if self.analysis is None else {t.target: t for t in self.analysis.over_baseline}

    @property
    def uplift_intervals(self) -> dict[str, UpliftInterval]:
        """Variant -> the interval of its median composite's uplift over the baseline."""
        return {v: t.uplift["composite"] for v, t in self.steps.items() if "composite" in t.uplift}

    @property
    def kind(self) -> str:
        """The task's kind (`evalq.scoring.kinds`): what the verdict is about."""
        return self.board.kind

    def recommendations(self) -> dict[str, int]:
        """How many ranked entries the PeerRead composite recommends each way ("none" without
        one); a run held for review is not counted."""
        counts = dict.fromkeys(RECOMMENDATIONS, 0)
        for entry in self.ranked:
            key = entry.recommendation or "none"
            counts[key] = counts.get(key, 0) + 1
        return {k: v for k, v in counts.items() if v or k != "none"}

    @property
    def entries(self) -> list[Entry]:
        """The leaderboard's entries, best first (held runs last, unranked)."""
        return self.board.entries

    @property
    def ranked(self) -> list[Entry]:
        """The ranked entries, best first: those not held for review."""
        return [e for e in self.board.entries if e.rank is not None]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (an infinite cost of pass is the string "inf")."""
        return {
            "task_id": self.task_id,
            "generated_at": self.generated_at,
            "confidence_level": self.confidence_level,
            "leaderboard": self.board.to_dict(),
            "runs": {sid: asdict(run) for sid, run in self.runs.items()},
            "intervals": [asdict(i) for i in self.intervals],
            "variants": None if self.analysis is None else self.analysis.to_dict(),
            "uplift_intervals": {v: asdict(i) for v, i in self.uplift_intervals.items()},
            "suite_gates": {sid: asdict(gate) for sid, gate in self.suite_gates.items()},
            "comparison": None if self.comparison is None else self.comparison.to_dict(),
            "recommendations": self.recommendations() if self.kind == "peerread" else None,
        }


def dimension_intervals(entries: list[Entry], level: float) -> list[Interval]:
    """Student-t interval of the mean of every dimension over the ranked entries (a run held
    for review is left out; too few entries: not enough data)."""
    ranked = [e for e in entries if e.rank is not None]
    intervals = []
    for name in DIMENSIONS:
        ci = confidence_interval([float(getattr(e, name)) for e in ranked], level)
        intervals.append(Interval(name, ci.mean, ci.low, ci.high, ci.enough_data))
    return intervals


def suite_gates(session: Session, *, task_id: str) -> dict[str, SuiteGate]:
    """The suite gate of every evaluated submission of the task that carries one."""
    gates = {}
    for row, evaluation in queries.task_evaluations(session, task_id=task_id):
        suite = EvaluationScores.model_validate(evaluation.scores).suite
        if suite is not None:
            gates[row.id] = SuiteGate(
                row.id,
                suite.passed,
                suite.final_score,
                tuple(suite.blocking_failures),
                tuple(suite.missing_required),
                tuple(suite.failed_required),
                tuple(suite.warnings),
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
    task = queries.get_task(session, task_id=task_id)
    profile = profile_named(task.profile, settings)
    board = leaderboard(session, task_id=task_id, settings=settings, include_held=include_held)
    runs = {
        row.id: Run(row.id, row.cost_usd, row.execution_time)
        for row, _ in queries.task_evaluations(session, task_id=task_id)
    }
    by_variant = variant_runs(session, task_id=task_id, include_held=include_held)
    level = profile.arena.confidence_level
    analysis = analyse_variants(by_variant, profile.scylla, level=level) if by_variant else None
    return ReportData(
        task_id=task_id,
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        confidence_level=level,
        board=board,
        runs=runs,
        intervals=dimension_intervals(board.entries, level),
        analysis=analysis,
        suite_gates=suite_gates(session, task_id=task_id),
        **task_comparison(session, board, settings),
    )


def task_comparison(
    session: Session, board: Leaderboard, settings: Settings | None
) -> dict[str, Any]:
    """``comparison`` (and ``comparison_note``) of `ReportData`: by variant (Scylla) or by
    model over scenarios (suite); a comparison the data cannot support is said, not raised."""
    ranked = [e for e in board.entries if e.rank is not None]
    held = board.include_held
    try:
        if board.kind == "scylla":
            variants = {e.variant for e in ranked if e.variant is not None}
            if len(variants) >= 2:
                found = compare(
                    session, tasks=board.task_id, by="variant", settings=settings, include_held=held
                )
                return {"comparison": found}
        if board.kind == "suite":
            models = list(dict.fromkeys(e.model for e in ranked if not e.partial))
            if len(models) >= 2:
                found = compare(
                    session,
                    tasks=board.task_id,
                    by="model",
                    values=models,
                    settings=settings,
                    include_held=held,
                )
                return {"comparison": found}
    except InvalidInput as refused:
        return {"comparison_note": "; ".join(rule for _, rule in refused.problems)}
    return {}
