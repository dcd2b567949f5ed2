"""Cost score (spec 000, "Cost Score"): the run's cost against the task's cost range."""

from __future__ import annotations

from dataclasses import dataclass

from evalq.core.profile import ArenaProfile
from evalq.scoring.arena.baseline import Baseline
from evalq.scoring.arena.run import ArenaRun
from evalq.scoring.arena.scale import clamp_score, range_position


@dataclass(frozen=True)
class CostResult:
    """Cost score in [0, 100]; ``imputed`` when the run had no cost and the default was used."""

    score: float
    imputed: bool


def cost_score(run: ArenaRun, baseline: Baseline, profile: ArenaProfile) -> CostResult:
    """``100 * (max - cost) / (max - min)`` over the baseline's cost range.

    100 at or below the minimum, 0 at or above the maximum. A run without a cost (None, or 0 as
    in the spec) scores ``profile.imputed_score`` (spec: 50) and is flagged ``imputed``.
    """
    cost = run.measured_cost
    if cost is None:
        return CostResult(score=clamp_score(profile.imputed_score), imputed=True)
    ratio = range_position(cost, baseline.min_cost, baseline.max_cost)
    return CostResult(score=clamp_score(100.0 * ratio), imputed=False)
