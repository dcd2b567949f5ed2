"""A bootstrap confidence interval of the uplift of one variant over the baseline.

Spec 003 defines uplift as ``(median(variant) - median(T0)) / median(T0)``; with ten runs per
variant that single number moves a lot from one batch of runs to the next, so the report shows
it with an interval. The method (Efron's percentile bootstrap, two independent samples):

1. draw ``resamples`` pairs of resamples, each of the same size as its sample, with
   replacement, from numpy's generator seeded with ``seed`` (so a report is reproducible);
2. compute the uplift of each pair's statistic (the median, or the mean for a pass rate, whose
   median over pass/fail runs is only ever 0 or 1); a pair whose baseline statistic is 0 has no
   uplift and is left out (``undefined`` counts them);
3. the interval is the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of those uplifts,
   linearly interpolated between order statistics (numpy's default, "type 7"); for the mean,
   the expanded quantiles of `evalq.stats.comparison.expanded_tail` at the smaller sample's
   size (the plain interval of a pass rate's uplift covers 90-92% at 5 runs; the median's
   already covers >= 93% from 5 runs: bench/interval_coverage.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from evalq.stats.statistics import summarize

# numpy is imported where it resamples: a leaderboard's rank intervals use only `quantile`.
if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

RESAMPLES = 2000
"""Resample pairs per interval: the 2.5% and 97.5% quantiles then rest on 50 values each."""
SEED = 0
"""The default seed: the same runs give the same interval in every report."""

Statistic = Literal["median", "mean"]


@dataclass(frozen=True)
class UpliftInterval:
    """An uplift with its bootstrap percentile interval.

    Attributes:
        uplift: the uplift of the observed medians; None when the baseline's median is 0.
        low / high: the interval's bounds; None when no resample had an uplift.
        level: the confidence level.
        resamples: resample pairs drawn.
        undefined: pairs left out because their baseline statistic was 0.
        seed: the seed of the generator (`numpy.random.default_rng`) they were drawn from.
        statistic: the statistic whose uplift it is.
    """

    uplift: float | None
    low: float | None
    high: float | None
    level: float
    resamples: int
    undefined: int
    seed: int = SEED
    statistic: Statistic = "median"

    @property
    def excludes_zero(self) -> bool:
        """The interval lies wholly above or wholly below zero (False without an interval)."""
        if self.low is None or self.high is None:
            return False
        return self.low > 0 or self.high < 0


def quantile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile of sorted ``ordered``, interpolated linearly ("type 7")."""
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def _uplift(
    variant: Sequence[float], baseline: Sequence[float], statistic: Statistic
) -> float | None:
    base = getattr(summarize(baseline), statistic)
    return None if base == 0 else (getattr(summarize(variant), statistic) - base) / base


def _resampled(
    values: Sequence[float], rng: np.random.Generator, resamples: int, statistic: Statistic
) -> npt.NDArray[np.float64]:
    """The statistic of each of ``resamples`` resamples of ``values`` (one row per resample)."""
    import numpy as np

    sample = np.asarray(values, dtype=np.float64)
    drawn = sample[rng.integers(0, len(sample), size=(resamples, len(sample)))]
    return np.median(drawn, axis=1) if statistic == "median" else drawn.mean(axis=1)


def bootstrap_uplift(
    variant: Sequence[float],
    baseline: Sequence[float],
    *,
    level: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    statistic: Statistic = "median",
) -> UpliftInterval:
    """The uplift of ``variant``'s ``statistic`` over ``baseline``'s with its percentile interval.

    Raises:
        ValueError: an empty sample, ``level`` outside (0, 1), or ``resamples`` below 1.
    """
    if not variant or not baseline:
        raise ValueError("bootstrap_uplift: both samples need at least one value")
    if not 0 < level < 1:
        raise ValueError("bootstrap_uplift: level must be between 0 and 1")
    if resamples < 1:
        raise ValueError("bootstrap_uplift: resamples must be at least 1")
    import numpy as np

    rng = np.random.default_rng(seed)
    after = _resampled(variant, rng, resamples, statistic)
    before = _resampled(baseline, rng, resamples, statistic)
    defined = before != 0
    drawn = sorted(((after[defined] - before[defined]) / before[defined]).tolist())
    alpha = (1 - level) / 2
    if statistic == "mean":  # a mean's percentile interval is too narrow at a few runs
        from evalq.stats.comparison import expanded_tail

        alpha = expanded_tail(level, min(len(variant), len(baseline)))
    return UpliftInterval(
        uplift=_uplift(variant, baseline, statistic),
        low=quantile(drawn, alpha) if drawn else None,
        high=quantile(drawn, 1 - alpha) if drawn else None,
        level=level,
        resamples=resamples,
        undefined=resamples - len(drawn),
        seed=seed,
        statistic=statistic,
    )
