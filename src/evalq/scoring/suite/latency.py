"""Latency percentile and its normalisation against a budget (spec 004, "Latency")."""

from __future__ import annotations

import math
from collections.abc import Sequence


def latency_percentile(latencies_ms: Sequence[float], percentile: float = 95.0) -> float | None:
    """The ``percentile``-th latency by the nearest-rank method; None when there is none.

    Nearest rank: sort the n values and take the one at 1-based rank ``ceil(p / 100 * n)``.
    The result is always an observed latency (no interpolation), so with fewer than 20 values
    the 95th percentile is the maximum.

    Raises:
        ValueError: ``percentile`` outside (0, 100], or a negative or non-finite latency.
    """
    if not 0 < percentile <= 100:
        raise ValueError("percentile must be in (0, 100]")
    if not all(math.isfinite(v) and v >= 0 for v in latencies_ms):
        raise ValueError("latencies must be finite and >= 0")
    if not latencies_ms:
        return None
    ordered = sorted(latencies_ms)
    rank = math.ceil(percentile / 100 * len(ordered))
    return ordered[max(rank, 1) - 1]


def latency_p95(latencies_ms: Sequence[float]) -> float | None:
    """95th-percentile latency in milliseconds (nearest rank); None when there is none."""
    return latency_percentile(latencies_ms, 95.0)


def normalized_latency(p95_ms: float | None, budget_ms: float) -> float | None:
    """``min(1, p95 / budget)``: 0 is instant, 1 is at or over budget; None without a p95.

    docs/scoring.md fixes this form; spec 004 names ``normalized_latency`` without defining it.
    """
    if budget_ms <= 0:
        raise ValueError("budget_ms must be > 0")
    return None if p95_ms is None else min(1.0, p95_ms / budget_ms)
