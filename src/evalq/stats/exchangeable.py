"""The note beside a verdict of "different" that the deciding test cannot vouch for.

The deciding test of a comparison (`evalq.stats.contrast`) is exact when, with no difference,
the labels (unpaired) or the signs of the differences (paired) are exchangeable: both sides
share one distribution, or the differences are symmetric about 0. Unpaired, it permutes
Welch's t (`evalq.stats.studentised`), which also holds as n grows when only the spreads
differ. With equal means and one side *skewed* it does not keep alpha at small n: measured with
`bench/exchangeability.py` (docs/statistics.md), up to 14% of such data sets are called different
at alpha 5% for n = 5-12, and the data sets so judged look like an honest shift (the skewed
side's sample missed its tail: tight, low, unskewed), so nothing in the data can single them
out. Hence the rule, read off that measurement:

- only a rejected verdict ("higher", "lower") carries the note: "no difference" makes no claim
  a false alarm could break;
- below `CHECKABLE_FROM` values on the smaller side (or pairs) every such verdict carries it:
  the assumption cannot be checked there, and where it fails the verdict is false far more
  often than alpha;
- from `CHECKABLE_FROM` on, where the data show the assumption failing: unpaired, the two
  sides' skewness apart by at least `SKEW_SE` standard errors of that gap; paired, the
  differences' skewness at least `SKEW_SE` standard errors from 0 (a sample skewness's
  standard error is about ``sqrt(6 / n)``). Spreads alone no longer need it there: Welch's t
  holds them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

CHECKABLE_FROM = 13
"""Fewest values on the smaller side (or pairs) whose skewness says anything of the shape
(its standard error, about sqrt(6 / n), is 0.68 at 13); measured up to 12 in the bench."""
SKEW_SE = 1.5
"""Skewness this many standard errors apart (paired: from 0) is a shape the data show."""
WORST = 0.15
"""The highest false-verdict rate measured at n = 5-12 with equal means and different shapes
(0.142, `bench/exchangeability.py`, docs/statistics.md), rounded up, quoted by the note."""


def skewness(values: Sequence[float]) -> float:
    """The moment coefficient of skewness (0 for a constant sample)."""
    n = len(values)
    mean = math.fsum(values) / n
    second = math.fsum((v - mean) ** 2 for v in values) / n
    if second <= 0:
        return 0.0
    return math.fsum((v - mean) ** 3 for v in values) / n / math.pow(second, 1.5)


def _standard_error(n: int) -> float:
    return math.sqrt(6 / n)


def _shown(reference: Sequence[float], other: Sequence[float], paired: bool) -> str | None:
    """The shape difference the data show, in words, else None."""
    if paired:
        differences = [b - a for a, b in zip(reference, other, strict=True)]
        skew = skewness(differences)
        if abs(skew) < SKEW_SE * _standard_error(len(differences)):
            return None
        return f"the paired differences are skewed (skewness {skew:+.2f}), not symmetric"
    gap = skewness(other) - skewness(reference)
    se = math.hypot(_standard_error(len(reference)), _standard_error(len(other)))
    if abs(gap) < SKEW_SE * se:
        return None
    return (
        f"the two sides differ in shape (skewness {skewness(reference):+.2f} and "
        f"{skewness(other):+.2f})"
    )


def shape_note(
    reference: Sequence[float], other: Sequence[float], *, paired: bool, rejected: bool
) -> str | None:
    """The note beside a rejected verdict the test cannot vouch for (module docstring), else
    None."""
    if not rejected or not reference or not other:
        return None
    size = min(len(reference), len(other))
    assumption = (
        "the paired differences are symmetric about 0"
        if paired
        else "the two sides' scores share one shape (differ only by a shift)"
    )
    risk = (
        f"where they do not, equal means are called different in up to {WORST:.0%} of data "
        "sets at alpha 5% (docs/statistics.md)"
    )
    if size < CHECKABLE_FROM:
        counted = f"{size} pairs" if paired else f"{size} values on the smaller side"
        return (
            f"this verdict cannot be trusted on its own: it assumes {assumption}, which "
            f"{counted} cannot show; {risk}"
        )
    shown = _shown(reference, other, paired)
    if shown is None:
        return None
    return f"this verdict cannot be trusted: {shown}, and it assumes {assumption}; {risk}"
