"""Cost score (spec 000, "Cost Score"): the run's cost against the task's cost range."""

from __future__ import annotations

from dataclasses import dataclass

from evalq.core.profile import ArenaProfile
from evalq.scoring.arena.baseline import Baseline
from evalq.scoring.arena.run import ArenaRun
from evalq.scoring.arena.scale import NOT_REPORTED_SCORE, clamp_score, range_position


@dataclass(frozen=True)
class CostResult:
    """Cost score in [0, 100]; ``not_reported`` when the run had no cost (it then scores 0)."""

    score: float
    not_reported: bool


def cost_score(run: ArenaRun, baseline: Baseline, profile: ArenaProfile) -> CostResult:
    """``100 * (max - cost) / (max - min)`` over the baseline's cost range.

    100 at or below the minimum, 0 at or above the maximum. A run without a cost (None, or 0 as
    in the spec) scores 0, the worst value, and is flagged ``not_reported`` (docs/scoring.md).
    """
    cost = run.measured_cost
    if cost is None:
        return CostResult(score=NOT_REPORTED_SCORE, not_reported=True)
    ratio = range_position(cost, baseline.min_cost, baseline.max_cost)
    return CostResult(score=clamp_score(100.0 * ratio), not_reported=False)
