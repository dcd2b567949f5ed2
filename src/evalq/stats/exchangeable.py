"""Whether the permutation test's one assumption visibly fails for a comparison's data.

The deciding test of a comparison (`evalq.stats.contrast`) is exact when, with no difference,
the labels (unpaired) or the signs of the differences (paired) are exchangeable: both sides
share one distribution, or the differences are symmetric about 0. With equal means but
different spreads or shapes it answers "do the two distributions differ?", and rejects more
often than alpha (6-12% at alpha 5%, n = 5-12: docs/statistics.md, `bench/exchangeability.py`);
no test keeps alpha at these sizes, so the verdict stays and a note beside it says so.

Read on the data itself: unpaired, one side's standard deviation at least `SPREAD_RATIO` times
the other's, or their skewness apart by at least `SKEW_GAP`; paired, the differences' skewness
at least `SKEW_GAP` from 0. The lines trade a note on honest data against a note missing on a
false verdict; measured in `bench/exchangeability.py` (docs/statistics.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

SPREAD_RATIO = 2.5
"""Standard deviations this far apart (the larger over the smaller) are a different spread."""
SKEW_GAP = 1.2
"""Skewness (the moment coefficient) this far apart, or paired differences' this far from 0,
is a different shape."""
MIN_VALUES = 3
"""Fewer values a side than this (or pairs) say nothing of a shape."""


def skewness(values: Sequence[float]) -> float:
    """The moment coefficient of skewness (0 for a constant sample)."""
    n = len(values)
    mean = math.fsum(values) / n
    second = math.fsum((v - mean) ** 2 for v in values) / n
    if second <= 0:
        return 0.0
    return math.fsum((v - mean) ** 3 for v in values) / n / math.pow(second, 1.5)


def _sd(values: Sequence[float]) -> float:
    mean = math.fsum(values) / len(values)
    return math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1))


def shape_note(reference: Sequence[float], other: Sequence[float], *, paired: bool) -> str | None:
    """The note beside a verdict whose two sides differ in spread or shape, else None."""
    if min(len(reference), len(other)) < MIN_VALUES:
        return None
    if paired:
        skew = skewness([b - a for a, b in zip(reference, other, strict=True)])
        if abs(skew) < SKEW_GAP:
            return None
        why = f"the paired differences are skewed (skewness {skew:+.2f}), not symmetric"
    else:
        sd_ref, sd_oth = _sd(reference), _sd(other)
        skew_ref, skew_oth = skewness(reference), skewness(other)
        spread = (
            max(sd_ref, sd_oth) >= SPREAD_RATIO * min(sd_ref, sd_oth) and max(sd_ref, sd_oth) > 0
        )
        if not spread and abs(skew_ref - skew_oth) < SKEW_GAP:
            return None
        why = (
            f"the two sides differ in spread (sd {sd_ref:.3g} and {sd_oth:.3g})"
            if spread
            else f"the two sides differ in shape (skewness {skew_ref:+.2f} and {skew_oth:+.2f})"
        )
    return (
        f"{why}: the permutation test then asks whether the distributions differ, not only "
        "the means, and with equal means it can reject in up to 12% of such data sets at "
        "alpha 5% (docs/statistics.md): read the verdict with that in mind"
    )
