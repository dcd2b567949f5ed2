"""Speed score (spec 000, "Speed Score"): execution time against the task's time range."""

from __future__ import annotations

from dataclasses import dataclass

from evalq.core.profile import ArenaProfile
from evalq.scoring.arena.baseline import Baseline
from evalq.scoring.arena.run import ArenaRun
from evalq.scoring.arena.scale import NOT_REPORTED_SCORE, clamp_score, range_position


@dataclass(frozen=True)
class SpeedResult:
    """Speed score in [0, 100]; ``not_reported`` when the run had no time (it then scores 0)."""

    score: float
    not_reported: bool


def speed_score(run: ArenaRun, baseline: Baseline, profile: ArenaProfile) -> SpeedResult:
    """``100 * r ** profile.speed_exponent`` with ``r = (max - t) / (max - min)``.

    100 at or below the baseline's minimum time, 0 at or above its maximum (the spec's exponent
    is 0.7). A run without a time (None or 0: not measured) scores 0, the worst value, and is
    flagged ``not_reported`` (docs/scoring.md: the spec's 50 let a run raise its score by leaving
    the time out).
    """
    time = run.measured_time
    if time is None:
        return SpeedResult(score=NOT_REPORTED_SCORE, not_reported=True)
    ratio = range_position(time, baseline.min_execution_time, baseline.max_execution_time)
    return SpeedResult(score=clamp_score(100.0 * ratio**profile.speed_exponent), not_reported=False)
