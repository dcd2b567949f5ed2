"""Where a figure sits between the best and worst of a baseline range (lower is better)."""

from __future__ import annotations

NOT_REPORTED_SCORE = 0.0
"""A dimension whose figure the run did not report scores the worst value (docs/scoring.md)."""


def range_position(value: float, best: float, worst: float) -> float:
    """Fraction of the way from ``worst`` back to ``best`` that ``value`` reaches, in [0, 1].

    ``(worst - value) / (worst - best)``, the ratio every spec 000 range score uses, with the
    spec's checks made first: at or below ``best`` gives 1, at or above ``worst`` gives 0. Those
    checks also settle a zero-width range (``best == worst``, e.g. every run used the same number
    of tokens): at or below it gives 1, above it 0, and nothing divides by zero.

    Args:
        value: the run's figure.
        best: the baseline minimum.
        worst: the baseline maximum (``>= best``; `Baseline` guarantees it).
    """
    if value <= best:
        return 1.0
    if value >= worst:
        return 0.0
    return (worst - value) / (worst - best)


def clamp_score(score: float) -> float:
    """``score`` limited to [0, 100] (docs/scoring.md: every Arena score is clamped)."""
    return min(100.0, max(0.0, score))
