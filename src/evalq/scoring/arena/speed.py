"""Speed score (spec 000, "Speed Score"): execution time against the task's time range."""

from __future__ import annotations

from dataclasses import dataclass

from evalq.core.profile import ArenaProfile
from evalq.scoring.arena.baseline import Baseline
from evalq.scoring.arena.run import ArenaRun
from evalq.scoring.arena.scale import clamp_score, range_position


@dataclass(frozen=True)
class SpeedResult:
    """Speed score in [0, 100]; ``imputed`` when the run had no time and the default was used."""

    score: float
    imputed: bool


def speed_score(run: ArenaRun, baseline: Baseline, profile: ArenaProfile) -> SpeedResult:
    """``100 * r ** profile.speed_exponent`` with ``r = (max - t) / (max - min)``.

    100 at or below the baseline's minimum time, 0 at or above its maximum (the spec's exponent
    is 0.7). A run without a time (None or 0, as the spec) scores ``profile.imputed_score``
    (spec: 50) and is flagged ``imputed`` (DESIGN.md).
    """
    time = run.measured_time
    if time is None:
        return SpeedResult(score=clamp_score(profile.imputed_score), imputed=True)
    ratio = range_position(time, baseline.min_execution_time, baseline.max_execution_time)
    return SpeedResult(score=clamp_score(100.0 * ratio**profile.speed_exponent), imputed=False)
