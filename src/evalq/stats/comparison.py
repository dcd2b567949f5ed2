"""Comparisons of two groups of scores: paired tests, effect size and multiple-test corrections.

The pure statistics core of docs/statistics.md (nothing here reads a database or knows about tasks).
Each function takes plain sequences of numbers; a *paired* function takes two sequences of the
same length whose ``i``-th entries belong together (the same task or scenario scored for A and
for B) and works on the differences ``a[i] - b[i]``. Pairing removes the spread between tasks
from the comparison, which is why a paired test can see a small consistent difference that an
unpaired one (Mann-Whitney U, offered only as the labelled fallback where nothing pairs) misses.

Randomised procedures draw from numpy's generator seeded with ``seed``
(`numpy.random.default_rng`) and record it, so the same inputs and seed always give the same
numbers. Resamples are drawn in blocks of at most `BLOCK_VALUES` values, so a comparison over
many tasks stays vectorised without holding every resample at once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from evalq.stats.bootstrap import quantile
from evalq.stats.permutation import EXACT_PAIRS, sign_flip_null
from evalq.stats.studentised import welch_null

RESAMPLES = 2000
"""Bootstrap resamples (and Monte Carlo sign flips) per interval or p-value."""
SEED = 0
"""The default seed: the same scores give the same interval in every report."""
BLOCK_VALUES = 1_000_000
"""Most values drawn at once (resamples x sample size) by a vectorised bootstrap."""
EXACT_PERMUTATION_LIMIT = EXACT_PAIRS
"""Up to this many pairs the permutation test enumerates all 2**n sign flips."""

Correction = Literal["holm", "benjamini-hochberg", "none"]
Method = Literal["exact", "normal-approximation", "monte-carlo", "no-difference"]


@dataclass(frozen=True)
class PairedDifference:
    """A mean difference with its percentile bootstrap interval: ``mean(a - b)`` over pairs, or
    ``mean(x) - mean(y)`` of two independent samples (`bootstrap_mean_difference`).

    Attributes:
        mean_difference: the observed mean difference.
        low / high: the interval's bounds.
        level: the confidence level.
        resamples: bootstrap resamples drawn.
        seed: the seed of the generator (`numpy.random.default_rng`) they were drawn from.
        pairs: the number of pairs; 0 for independent samples.
        method: how the interval was drawn: ``"inverted permutation test"`` (the set of
            differences the deciding test does not reject at ``1 - level``, so it excludes 0
            exactly when the test rejects) or ``"bootstrap"`` (expanded percentile).
    """

    mean_difference: float
    low: float
    high: float
    level: float
    resamples: int
    seed: int
    pairs: int
    method: str = "bootstrap"


@dataclass(frozen=True)
class Significance:
    """The outcome of one two-sided significance test.

    Attributes:
        test: the test's name, e.g. ``"wilcoxon-signed-rank"``.
        paired: False for the unpaired fallback (Mann-Whitney U).
        statistic: the test statistic as the named test defines it.
        p_value: the two-sided p-value.
        method: how the p-value was obtained; ``"no-difference"`` when every pair is tied
            (there is nothing to test and the p-value is 1).
        n: pairs (paired tests; for McNemar the discordant pairs) or total values (unpaired).
        seed: the seed of a Monte Carlo p-value, else None.
    """

    test: str
    paired: bool
    statistic: float
    p_value: float
    method: Method
    n: int
    seed: int | None = None


@dataclass(frozen=True)
class CliffsDelta:
    """Cliff's delta ``P(x > y) - P(x < y)`` with its percentile bootstrap interval."""

    delta: float
    low: float
    high: float
    level: float
    resamples: int
    seed: int


@dataclass(frozen=True)
class Corrected:
    """p-values adjusted for multiple comparisons, in the order they were given.

    Attributes:
        correction: the correction applied (named in every output that uses it).
        alpha: the family-wise (Holm) or false-discovery (Benjamini-Hochberg) level.
        adjusted: the adjusted p-values.
        rejected: whether each null hypothesis is rejected (``adjusted <= alpha``).
        threshold: the raw p-value at or below which this family's tests were rejected
            (every correction here is a threshold on the raw p-values: Holm ``alpha / (m - r)``
            with r rejections, ``alpha`` when all are; Benjamini-Hochberg ``alpha * k / m``
            with k rejections, ``alpha / m`` when none; none ``alpha``). An interval drawn
            at ``1 - threshold`` by inverting the test excludes 0 exactly when it is rejected.
    """

    correction: Correction
    alpha: float
    adjusted: tuple[float, ...]
    rejected: tuple[bool, ...]
    threshold: float = 0.05


def _differences(a: Sequence[float], b: Sequence[float], name: str) -> list[float]:
    if len(a) != len(b):
        raise ValueError(f"{name}: a and b must pair up (got {len(a)} and {len(b)} values)")
    if not a:
        raise ValueError(f"{name}: no pairs")
    return [float(x) - float(y) for x, y in zip(a, b, strict=True)]


def _check(level: float, resamples: int, name: str) -> None:
    if not 0 < level < 1:
        raise ValueError(f"{name}: level must be between 0 and 1")
    if resamples < 1:
        raise ValueError(f"{name}: resamples must be at least 1")


def _blocks(resamples: int, size: int) -> list[int]:
    """Resample counts per block so that no block draws more than `BLOCK_VALUES` values."""
    rows = max(1, BLOCK_VALUES // max(1, size))
    return [min(rows, resamples - start) for start in range(0, resamples, rows)]


def resampled_means(
    values: npt.NDArray[np.float64], rng: np.random.Generator, resamples: int
) -> npt.NDArray[np.float64]:
    """The mean of each of ``resamples`` resamples of ``values`` (with replacement)."""
    n = len(values)
    return np.concatenate(
        [values[rng.integers(0, n, size=(rows, n))].mean(axis=1) for rows in _blocks(resamples, n)]
    )


def expanded_tail(level: float, n: int) -> float:
    """The tail probability at which `paired_bootstrap_ci` reads its resampled means.

    Hesterberg's *expanded percentile* interval (Hesterberg 2015, "What teachers should know
    about the bootstrap", s. 4.1): a plain percentile interval of a mean is too narrow at small
    n (its "95%" covers 55% at 2 pairs, 82% at 5, 92% at 12: bench/interval_coverage.py), as
    if the spread were known. Reading the bootstrap quantiles at
    ``Phi(-sqrt(n / (n - 1)) * t[n-1, (1 + level) / 2])`` instead of ``(1 - level) / 2``
    widens it by Student's t and the ``n - 1`` divisor; at large n it is the plain interval.
    """
    from scipy.stats import norm, t

    if n < 2:
        return (1 - level) / 2
    return float(norm.cdf(-math.sqrt(n / (n - 1)) * t.ppf((1 + level) / 2, n - 1)))


def paired_bootstrap_ci(
    a: Sequence[float],
    b: Sequence[float],
    *,
    level: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> PairedDifference:
    """The mean of ``a[i] - b[i]`` with a percentile bootstrap interval over the pairs.

    Each resample draws ``len(a)`` pairs with replacement (pairs stay together); the interval
    is the expanded percentile interval (`expanded_tail`): the resampled means' quantiles at
    ``expanded_tail(level, n)`` and one minus it, so that its coverage holds at a few pairs.

    Raises:
        ValueError: unequal lengths, no pairs, ``level`` outside (0, 1), ``resamples`` below 1.
    """
    diffs = _differences(a, b, "paired_bootstrap_ci")
    _check(level, resamples, "paired_bootstrap_ci")
    n = len(diffs)
    rng = np.random.default_rng(seed)
    means = sorted(resampled_means(np.asarray(diffs), rng, resamples).tolist())
    alpha = expanded_tail(level, n)
    return PairedDifference(
        mean_difference=math.fsum(diffs) / n,
        low=quantile(means, alpha),
        high=quantile(means, 1 - alpha),
        level=level,
        resamples=resamples,
        seed=seed,
        pairs=n,
    )


def signed_rank_sum(differences: Sequence[float]) -> float:
    """``R+ - R-``: the mid-ranks of ``|d|`` summed with the signs of the nonzero differences.

    Positive when the differences lean positive by rank (the direction Wilcoxon's test sees,
    which the mean can contradict when one large difference outweighs many small ones).
    """
    nonzero = np.asarray([d for d in differences if d != 0], dtype=float)
    if not len(nonzero):
        return 0.0
    from scipy.stats import rankdata  # scipy.stats costs 1.3 s to import: only when needed

    return float(np.sign(nonzero) @ rankdata(np.abs(nonzero)))


def _exact_tied(nonzero: Sequence[float]) -> tuple[float, float]:
    """(min(R+, R-), exact two-sided p) of the signed-rank statistic with tied magnitudes.

    Every one of the ``2**n`` sign assignments of the mid-ranks is equally likely under the
    null hypothesis; the p-value is the share whose ``|R+ - E|`` is at least the observed.
    """
    from scipy.stats import rankdata  # scipy.stats costs 1.3 s to import: only when needed

    ranks = rankdata(np.abs(np.asarray(nonzero, dtype=float)))
    n = len(ranks)
    observed = float(ranks[np.asarray(nonzero) > 0].sum())
    centre = float(ranks.sum()) / 2
    bits = (np.arange(2**n)[:, None] >> np.arange(n)) & 1
    spread = np.abs(bits @ ranks - centre)
    # mid-ranks are multiples of 1/2, so a half-step tolerance is exact
    p_value = float(np.count_nonzero(spread >= abs(observed - centre) - 0.25)) / 2**n
    return min(observed, float(ranks.sum()) - observed), min(1.0, p_value)


DIFFERENCE_DECIMALS = 12
"""Decimal places at which `wilcoxon_signed_rank` compares differences: equal to 12 places is
equal (and zero to 12 places is no difference). Scores are on [0, 1] or [0, 100], so this is far
below any difference a score can mean and far above floating-point noise (~1e-16)."""


def wilcoxon_signed_rank(a: Sequence[float], b: Sequence[float]) -> Significance:
    """Wilcoxon's signed-rank test of ``a[i] - b[i]``, two-sided.

    Differences are compared at `DIFFERENCE_DECIMALS` places; zero differences are dropped
    (Wilcoxon's convention). The p-value is exact up to 50
    remaining pairs without tied magnitudes (scipy), and up to `EXACT_PERMUTATION_LIMIT` pairs
    with ties (every sign assignment of the mid-ranks enumerated: pass/fail differences are
    all ties, and a normal approximation there would fall below the smallest p-value the test
    can give); else the normal approximation with tie and continuity corrections (scipy). When
    every difference is zero the result says ``"no-difference"``, p = 1. The statistic is
    ``min(R+, R-)``.
    """
    # Rounded, so that differences equal in exact arithmetic are one tie (0.7 - 0.6 and
    # 0.4 - 0.3 differ in their last bits as floats, and would get two ranks).
    diffs = [round(d, DIFFERENCE_DECIMALS) for d in _differences(a, b, "wilcoxon_signed_rank")]
    nonzero = [d for d in diffs if d != 0]
    if not nonzero:
        return Significance("wilcoxon-signed-rank", True, 0.0, 1.0, "no-difference", len(diffs))
    magnitudes = [abs(d) for d in nonzero]
    tied = len(set(magnitudes)) < len(magnitudes)
    if tied and len(nonzero) <= EXACT_PERMUTATION_LIMIT:
        statistic, p_value = _exact_tied(nonzero)
        return Significance("wilcoxon-signed-rank", True, statistic, p_value, "exact", len(diffs))
    exact = len(nonzero) <= 50 and not tied
    from scipy.stats import wilcoxon  # scipy.stats costs 1.3 s to import: only when needed

    result = wilcoxon(
        nonzero,
        zero_method="wilcox",
        correction=not exact,
        method="exact" if exact else "approx",
    )
    return Significance(
        test="wilcoxon-signed-rank",
        paired=True,
        statistic=float(result.statistic),
        p_value=float(result.pvalue),
        method="exact" if exact else "normal-approximation",
        n=len(diffs),
    )


def paired_permutation_test(
    a: Sequence[float],
    b: Sequence[float],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Significance:
    """The paired permutation (sign-flip) test of the mean difference, two-sided.

    Under the null hypothesis each difference is as likely to have either sign. The p-value is
    the share of sign assignments whose ``|mean|`` is at least the observed one: all ``2**n``
    of them for ``n <= EXACT_PERMUTATION_LIMIT``, else ``resamples`` seeded random ones, with
    the observed assignment counted (``(1 + hits) / (1 + resamples)``, never 0). Inverted, it
    is the interval of `evalq.stats.permutation` (`PermutationNull.interval`).
    """
    diffs = _differences(a, b, "paired_permutation_test")
    if resamples < 1:
        raise ValueError("paired_permutation_test: resamples must be at least 1")
    null = sign_flip_null(diffs, resamples=resamples, seed=seed)
    n = len(diffs)
    return Significance(
        "paired-permutation", True, abs(null.estimate), null.p_value(), null.method, n, null.seed
    )


def two_sample_permutation_test(
    x: Sequence[float],
    y: Sequence[float],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Significance:
    """The two-sample permutation test of ``mean(x) - mean(y)``, two-sided (unpaired).

    The p-value is the share of splits of the pooled values into groups of the two sizes whose
    Welch t (the difference of means over its standard error) is at least the observed one in
    absolute value: every split up to `evalq.stats.permutation.EXACT_SPLITS`, else
    ``resamples`` seeded random ones with the observed counted (`evalq.stats.studentised`).
    Exact when the two sides share one distribution, and valid as n grows for equal means of
    different spreads. It asks what the interval beside it answers (the mean difference), which
    Mann-Whitney U (ranks) does not.
    """
    if not x or not y:
        raise ValueError("two_sample_permutation_test: both samples need at least one value")
    if resamples < 1:
        raise ValueError("two_sample_permutation_test: resamples must be at least 1")
    null = welch_null(x, y, resamples=resamples, seed=seed)
    return Significance(
        "permutation (unpaired)",
        False,
        abs(null.estimate),
        null.p_value(),
        null.method,
        len(x) + len(y),
        null.seed,
    )


def mcnemar_exact(a_passed: Sequence[bool], b_passed: Sequence[bool]) -> Significance:
    """McNemar's exact test of paired pass/fail outcomes, two-sided.

    Only the discordant pairs count: ``only_a`` (A passed, B failed) and ``only_b``. Under the
    null hypothesis ``only_a`` is Binomial(only_a + only_b, 1/2); the p-value is twice the
    smaller tail, at most 1. The statistic is ``only_a``; no discordant pairs give p = 1.
    """
    if len(a_passed) != len(b_passed):
        raise ValueError("mcnemar_exact: a_passed and b_passed must pair up")
    only_a = sum(1 for x, y in zip(a_passed, b_passed, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a_passed, b_passed, strict=True) if y and not x)
    discordant = only_a + only_b
    if discordant == 0:
        return Significance("mcnemar-exact", True, 0.0, 1.0, "no-difference", 0)
    tail = sum(math.comb(discordant, k) for k in range(min(only_a, only_b) + 1))
    p_value = min(1.0, 2 * tail / 2**discordant)
    return Significance("mcnemar-exact", True, float(only_a), p_value, "exact", discordant)


def _cliffs_delta(x: npt.NDArray[np.float64], y: npt.NDArray[np.float64]) -> float:
    """``(#(x_i > y_j) - #(x_i < y_j)) / (len(x) * len(y))`` in O((n + m) log m)."""
    ordered = np.sort(y)
    below = np.searchsorted(ordered, x, side="left")  # y values smaller than each x
    above = len(ordered) - np.searchsorted(ordered, x, side="right")
    return float((below - above).sum()) / (len(x) * len(y))


def cliffs_delta(
    x: Sequence[float],
    y: Sequence[float],
    *,
    level: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    paired: bool = False,
) -> CliffsDelta:
    """Cliff's delta of ``x`` over ``y`` with an expanded percentile bootstrap interval
    (`expanded_tail` at the smaller sample's size: the plain percentile interval covers 85-91%
    at 5-12 values, bench/interval_coverage.py).

    ``delta = (#(x_i > y_j) - #(x_i < y_j)) / (len(x) * len(y))``: 1 when every ``x`` beats
    every ``y``, -1 when every ``y`` wins, 0 when neither side tends to win. Each resample
    draws both samples independently with replacement, or, ``paired``, the same indices of
    both (``x[i]`` and ``y[i]`` belong to one task and stay together).

    Raises:
        ValueError: an empty sample, unequal lengths when paired, ``level`` outside (0, 1),
            ``resamples`` below 1.
    """
    if not x or not y:
        raise ValueError("cliffs_delta: both samples need at least one value")
    if paired and len(x) != len(y):
        raise ValueError("cliffs_delta: paired samples must have the same length")
    _check(level, resamples, "cliffs_delta")
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    # A resample only re-weights the values: where each x falls among the sorted y is fixed,
    # so each resample is a weighted count (O(n + m)), with no sort and no search.
    order = np.argsort(ys, kind="stable")
    ordered = ys[order]
    low = np.searchsorted(ordered, xs, side="left")  # y values smaller than each x
    high = np.searchsorted(ordered, xs, side="right")  # y values at most each x
    n, m = len(xs), len(ys)
    rng = np.random.default_rng(seed)
    # The draws as one resample at a time takes them (x's n, then y's m, resample after
    # resample). Draws of one bound are one stream however they are split into calls, so
    # with one bound (paired, or n == m) they are taken in one call; otherwise one call per
    # resample and sample. The counting is done for every resample at once (integers
    # throughout: the same values as one at a time).
    if paired:
        x_picks = y_picks = rng.integers(0, n, size=(resamples, n))
    elif n == m:
        both = rng.integers(0, n, size=(resamples, 2 * n))
        x_picks, y_picks = both[:, :n], both[:, n:]
    else:
        x_picks = np.empty((resamples, n), dtype=np.int64)
        y_picks = np.empty((resamples, m), dtype=np.int64)
        for r in range(resamples):
            x_picks[r] = rng.integers(0, n, size=n)
            y_picks[r] = rng.integers(0, m, size=m)
    x_weights = _counts(x_picks, n)
    y_weights = x_weights if paired else _counts(y_picks, m)
    below = np.zeros((resamples, m + 1), dtype=np.int64)
    np.cumsum(y_weights[:, order], axis=1, out=below[:, 1:])
    wins = below[:, low] - (m - below[:, high])  # y drawn below each x minus y drawn above it
    drawn = [float(won) / (n * m) for won in (x_weights * wins).sum(axis=1).tolist()]
    drawn.sort()
    alpha = expanded_tail(level, min(n, m))
    return CliffsDelta(
        delta=_cliffs_delta(xs, ys),
        low=quantile(drawn, alpha),
        high=quantile(drawn, 1 - alpha),
        level=level,
        resamples=resamples,
        seed=seed,
    )


def _counts(picks: npt.NDArray[np.int64], size: int) -> npt.NDArray[np.int64]:
    """How often each of ``size`` positions was drawn, one row per resample (`np.bincount` of
    each row)."""
    rows = len(picks)
    offsets = (np.arange(rows, dtype=np.int64) * size)[:, None]
    flat = np.bincount((picks + offsets).ravel(), minlength=rows * size)
    return flat.reshape(rows, size)


def mann_whitney_u(x: Sequence[float], y: Sequence[float]) -> Significance:
    """Mann-Whitney U (scipy, two-sided): the *unpaired* fallback where nothing pairs.

    The statistic is U of ``x``; the p-value is exact when one sample has at most 8 values
    and no value repeats, else the normal approximation with continuity correction.
    """
    if not x or not y:
        raise ValueError("mann_whitney_u: both samples need at least one value")
    exact = min(len(x), len(y)) <= 8 and len(set(x) | set(y)) == len(x) + len(y)
    from scipy.stats import mannwhitneyu  # scipy.stats costs 1.3 s to import: only when needed

    result = mannwhitneyu(x, y, alternative="two-sided", method="exact" if exact else "asymptotic")
    return Significance(
        test="mann-whitney-u (unpaired)",
        paired=False,
        statistic=float(result.statistic),
        p_value=float(result.pvalue),
        method="exact" if exact else "normal-approximation",
        n=len(x) + len(y),
    )


def correct(
    p_values: Sequence[float], *, correction: Correction = "holm", alpha: float = 0.05
) -> Corrected:
    """Adjust ``p_values`` for multiple comparisons.

    Holm (the default) controls the family-wise error rate: the ``k``-th smallest p-value
    (from 0) is multiplied by ``m - k``, then made non-decreasing. Benjamini-Hochberg controls
    the false discovery rate: the ``k``-th smallest (from 1) is multiplied by ``m / k``, then
    made non-increasing from the largest down. Adjusted values are capped at 1.
    """
    if not 0 < alpha < 1:
        raise ValueError("correct: alpha must be between 0 and 1")
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    if correction == "holm":
        running = 0.0
        for rank, i in enumerate(order):
            running = max(running, min(1.0, (m - rank) * p_values[i]))
            adjusted[i] = running
    elif correction == "benjamini-hochberg":
        running = 1.0
        for rank in range(m - 1, -1, -1):
            i = order[rank]
            running = min(running, m * p_values[i] / (rank + 1))
            adjusted[i] = running
    else:
        adjusted = [float(p) for p in p_values]
    rejected = tuple(p <= alpha for p in adjusted)
    return Corrected(
        correction=correction,
        alpha=alpha,
        adjusted=tuple(adjusted),
        rejected=rejected,
        threshold=_threshold(p_values, rejected, correction, alpha),
    )


def _threshold(
    p_values: Sequence[float], rejected: Sequence[bool], correction: Correction, alpha: float
) -> float:
    """`Corrected.threshold`; where floating point puts a p-value on the wrong side of the
    textbook threshold, the largest rejected p-value (or just under the smallest kept one)."""
    m, r = len(p_values), sum(rejected)
    if correction == "holm":
        found = alpha if r == m else alpha / (m - r)
    elif correction == "benjamini-hochberg":
        found = alpha * max(r, 1) / max(m, 1)
    else:
        found = alpha
    if all((p <= found) == kept for p, kept in zip(p_values, rejected, strict=True)):
        return found
    if r:
        return max(p for p, kept in zip(p_values, rejected, strict=True) if kept)
    return min(p_values) * (1 - 1e-12)


def bootstrap_mean_difference(
    x: Sequence[float],
    y: Sequence[float],
    *,
    level: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> PairedDifference:
    """``mean(x) - mean(y)`` of two *independent* samples with a percentile bootstrap interval.

    The unpaired counterpart of `paired_bootstrap_ci`: each resample draws both samples
    independently with replacement; the interval is the expanded percentile interval
    (`expanded_tail` at the smaller sample's size). The result's ``pairs`` is 0 (nothing pairs).

    Raises:
        ValueError: an empty sample, ``level`` outside (0, 1), ``resamples`` below 1.
    """
    if not x or not y:
        raise ValueError("bootstrap_mean_difference: both samples need at least one value")
    _check(level, resamples, "bootstrap_mean_difference")
    rng = np.random.default_rng(seed)
    after = resampled_means(np.asarray(x, dtype=float), rng, resamples)
    before = resampled_means(np.asarray(y, dtype=float), rng, resamples)
    drawn = sorted((after - before).tolist())
    alpha = expanded_tail(level, min(len(x), len(y)))
    return PairedDifference(
        mean_difference=math.fsum(x) / len(x) - math.fsum(y) / len(y),
        low=quantile(drawn, alpha),
        high=quantile(drawn, 1 - alpha),
        level=level,
        resamples=resamples,
        seed=seed,
        pairs=0,
    )
