"""Everything a report shows, assembled from the store (no rendering here)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.orm import Session

from evalq.core.profile import profile_named
from evalq.core.settings import Settings
from evalq.read.leaderboard import CATEGORIES, Entry, Leaderboard, leaderboard
from evalq.read.variants import variant_runs
from evalq.scoring.confidence import confidence_interval
from evalq.scoring.variants import VariantReport, compare_variants
from evalq.store import queries

DIMENSIONS = ("overall", *CATEGORIES)
"""The Arena scores a report breaks down: the overall score and its four categories."""


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
class ReportData:
    """A task's report: the leaderboard, the per-dimension intervals, costs, and variants.

    Attributes:
        task_id: the task.
        generated_at: ISO timestamp (UTC) of the assembly.
        confidence_level: the profile's Arena confidence level.
        board: the leaderboard (every evaluated submission, ranked).
        runs: submission id -> its cost and time as stored.
        intervals: one per `DIMENSIONS` entry, in that order.
        variants: the Scylla cross-variant comparison, None when no submission has a variant.
    """

    task_id: str
    generated_at: str
    confidence_level: float
    board: Leaderboard
    runs: dict[str, Run]
    intervals: list[Interval]
    variants: VariantReport | None

    @property
    def entries(self) -> list[Entry]:
        """The leaderboard's entries, best first."""
        return self.board.entries

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (an infinite cost of pass is the string "inf")."""
        return {
            "task_id": self.task_id,
            "generated_at": self.generated_at,
            "confidence_level": self.confidence_level,
            "leaderboard": self.board.to_dict(),
            "runs": {sid: asdict(run) for sid, run in self.runs.items()},
            "intervals": [asdict(i) for i in self.intervals],
            "variants": None if self.variants is None else self.variants.to_dict(),
        }


def dimension_intervals(entries: list[Entry], level: float) -> list[Interval]:
    """Student-t interval of the mean of every dimension (too few entries: not enough data)."""
    intervals = []
    for name in DIMENSIONS:
        ci = confidence_interval([float(getattr(e, name)) for e in entries], level)
        intervals.append(Interval(name, ci.mean, ci.low, ci.high, ci.enough_data))
    return intervals


def report_data(session: Session, *, task_id: str, settings: Settings | None = None) -> ReportData:
    """Assemble a task's report from stored evaluations (raises NotFound for an unknown task)."""
    task = queries.get_task(session, task_id=task_id)
    profile = profile_named(task.profile, settings)
    board = leaderboard(session, task_id=task_id, settings=settings)
    runs = {
        row.id: Run(row.id, row.cost_usd, row.execution_time)
        for row, _ in queries.task_evaluations(session, task_id=task_id)
    }
    by_variant = variant_runs(session, task_id=task_id)
    level = profile.arena.confidence_level
    return ReportData(
        task_id=task_id,
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        confidence_level=level,
        board=board,
        runs=runs,
        intervals=dimension_intervals(board.entries, level),
        variants=compare_variants(by_variant, profile.scylla) if by_variant else None,
    )
