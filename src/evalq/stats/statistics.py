"""Summary statistics of repeated runs (spec 003, "Aggregate Statistics")."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Statistics:
    """Median, mean, mode, range, population standard deviation and count of some values."""

    median: float
    mean: float
    mode: float
    min: float
    max: float
    std_dev: float
    count: int


def summarize(values: Sequence[float]) -> Statistics:
    """Summarise ``values`` as spec 003 defines it.

    The median of an even count is the mean of the two middle values; the mode is the most
    frequent value, the smallest one on ties; the standard deviation is the population one
    (divided by n, not n - 1), because the runs of a variant are all the runs, not a sample.

    Args:
        values: finite numbers, at least one.

    Returns:
        The statistics of ``values``.

    Raises:
        ValueError: ``values`` is empty (there is no meaningful median of nothing; callers
            report a metric nobody measured as None rather than as a Statistics) or holds a
            non-finite number.
    """
    if not values:
        raise ValueError("summarize: no values")
    if not all(math.isfinite(v) for v in values):
        raise ValueError("summarize: values must be finite")
    ordered = sorted(float(v) for v in values)
    n = len(ordered)
    mid = n // 2
    median = ordered[mid] if n % 2 == 1 else (ordered[mid - 1] + ordered[mid]) / 2
    # fsum keeps the mean exact enough; clamping guards the last ulp for constant inputs.
    mean = min(max(math.fsum(ordered) / n, ordered[0]), ordered[-1])
    counts = Counter(ordered)
    top = max(counts.values())
    mode = min(v for v, c in counts.items() if c == top)
    variance = math.fsum((v - mean) ** 2 for v in ordered) / n
    return Statistics(
        median=median,
        mean=mean,
        mode=mode,
        min=ordered[0],
        max=ordered[-1],
        std_dev=math.sqrt(variance),
        count=n,
    )


def population_variance(values: Sequence[float]) -> float | None:
    """Population variance ``sum((v - mean)^2) / n`` of ``values``; None when empty."""
    if not values:
        return None
    mean = math.fsum(values) / len(values)
    return math.fsum((v - mean) ** 2 for v in values) / len(values)
