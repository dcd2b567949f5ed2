"""Plausibility checks on a finished evaluation (spec 000, "Validation Rules")."""

from __future__ import annotations

import math

from evalq.core.results import ArenaScores
from evalq.scoring.arena.run import ArenaRun

SUSPICIOUS_SCORE = 95.0
"""Efficiency and speed both above this are suspicious (spec 000)."""
MIN_PLAUSIBLE_TOKENS = 10
"""Fewer total tokens than this are suspicious (spec 000)."""


def validate_evaluation(score: ArenaScores, run: ArenaRun) -> list[str]:
    """Problems with an evaluation, as human-readable messages; empty when it looks sound.

    The spec's rules: every score (overall, efficiency, speed, cost, correctness) in [0, 100]
    (a NaN fails too); efficiency and speed both above 95 is suspicious; fewer than 10 total
    tokens is suspicious. A speed that was not reported is 0 by construction, so it never trips
    the second rule. evalq adds one: the score must belong to the run.
    """
    errors = []
    dimensions = {
        "overall": score.overall_score,
        "efficiency": score.efficiency_score,
        "speed": score.speed_score,
        "cost": score.cost_score,
        "correctness": score.correctness_score,
    }
    for name, value in dimensions.items():
        if not (math.isfinite(value) and 0.0 <= value <= 100.0):
            errors.append(f"{name}_score out of range: {value}")
    if score.efficiency_score > SUSPICIOUS_SCORE and score.speed_score > SUSPICIOUS_SCORE:
        errors.append("Suspicious: Both efficiency and speed scores are extremely high")
    if run.total_tokens < MIN_PLAUSIBLE_TOKENS:
        errors.append("Suspiciously low token count")
    if score.submission_id != run.submission_id:
        errors.append(
            f"score is for submission {score.submission_id!r}, run is {run.submission_id!r}"
        )
    return errors
