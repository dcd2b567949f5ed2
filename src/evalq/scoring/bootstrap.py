"""A bootstrap confidence interval of the uplift of one variant's median over the baseline's.

Spec 003 defines uplift as ``(median(variant) - median(T0)) / median(T0)``; with ten runs per
variant that single number moves a lot from one batch of runs to the next, so the report shows
it with an interval. The method (Efron's percentile bootstrap, two independent samples):

1. draw ``resamples`` pairs of resamples, each of the same size as its sample, with
   replacement, from a `random.Random` seeded with ``seed`` (so a report is reproducible);
2. compute the uplift of each pair's medians; a pair whose baseline median is 0 has no uplift
   and is left out (``undefined`` counts them);
3. the interval is the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of those uplifts,
   linearly interpolated between order statistics (numpy's default, "type 7").
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from evalq.scoring.statistics import summarize

RESAMPLES = 2000
"""Resample pairs per interval: the 2.5% and 97.5% quantiles then rest on 50 values each."""
SEED = 0
"""The default seed: the same runs give the same interval in every report."""


@dataclass(frozen=True)
class UpliftInterval:
    """An uplift with its bootstrap percentile interval.

    Attributes:
        uplift: the uplift of the observed medians; None when the baseline's median is 0.
        low / high: the interval's bounds; None when no resample had an uplift.
        level: the confidence level.
        resamples: resample pairs drawn.
        undefined: pairs left out because their baseline median was 0.
    """

    uplift: float | None
    low: float | None
    high: float | None
    level: float
    resamples: int
    undefined: int


def quantile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile of sorted ``ordered``, interpolated linearly ("type 7")."""
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def _uplift(variant: Sequence[float], baseline: Sequence[float]) -> float | None:
    base = summarize(baseline).median
    return None if base == 0 else (summarize(variant).median - base) / base


def bootstrap_uplift(
    variant: Sequence[float],
    baseline: Sequence[float],
    *,
    level: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> UpliftInterval:
    """The uplift of ``variant``'s median over ``baseline``'s with its percentile interval.

    Raises:
        ValueError: an empty sample, ``level`` outside (0, 1), or ``resamples`` below 1.
    """
    if not variant or not baseline:
        raise ValueError("bootstrap_uplift: both samples need at least one value")
    if not 0 < level < 1:
        raise ValueError("bootstrap_uplift: level must be between 0 and 1")
    if resamples < 1:
        raise ValueError("bootstrap_uplift: resamples must be at least 1")
    rng = random.Random(seed)
    drawn = []
    for _ in range(resamples):
        resampled = rng.choices(variant, k=len(variant))
        value = _uplift(resampled, rng.choices(baseline, k=len(baseline)))
        if value is not None:
            drawn.append(value)
    drawn.sort()
    alpha = (1 - level) / 2
    return UpliftInterval(
        uplift=_uplift(variant, baseline),
        low=quantile(drawn, alpha) if drawn else None,
        high=quantile(drawn, 1 - alpha) if drawn else None,
        level=level,
        resamples=resamples,
        undefined=resamples - len(drawn),
    )
