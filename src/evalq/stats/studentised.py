"""The two-sample permutation test of Welch's t, and the interval got by inverting it.

An unpaired comparison's deciding test. The permutation test of the raw difference of means
(`evalq.stats.permutation.two_sample_null`) is exact when, with no difference, the labels are
exchangeable (both sides share one distribution); when the sides have equal means but
different spreads it tests "same distribution?" and, with unequal sizes, rejects far more often
than alpha. Rearranging the same splits of the pooled values but comparing each split's
*Welch* statistic, ``(mean_1 - mean_2) / sqrt(v_1 / n_1 + v_2 / n_2)``, keeps the exactness
(it is still a permutation test) and is asymptotically valid for equal means whatever the
spreads (Janssen 1997; Chung and Romano 2013, "Exact and asymptotically robust permutation
tests"). With equal sizes it is the same test as the raw one (the pooled sum of squares is
the within-group part plus a multiple of the squared difference, so Welch's t grows with the
difference in every split, at every shift), so `welch_null` returns that test's null there
(its interval's ends in closed form); it changes answers only when the sizes differ. Its
validity for unequal spreads is asymptotic: at 5-12 runs a side it still exceeds alpha, and
neither test keeps alpha at small n when one side is skewed: docs/statistics.md gives the
measured rates, and `evalq.stats.exchangeable` the note beside such a verdict.

**A side with no spread.** A side of one value, or of equal values, has variance 0 (one value
gives no estimate of it: 0 too); the standard error is then the other side's alone. When both
sides of a split have variance 0, a non-zero difference of means is infinitely many standard
errors away (only splits that are also two constant groups tie it) and a zero one is 0.

**The interval** is the set of shifts ``delta`` of the first sample (``x - delta``) the test
does not reject. Welch's t of a split is not linear in the shift (each group's variance moves
with it), so the ends are searched for on the p-value itself: outward from the estimate
(where every split ties, p = 1) in doubling steps until a shift is rejected, then narrowed to
`RESOLUTION` of the data's scale (regula falsi; about 35 evaluations of every split per
interval); on the side of 0, from 0 when 0 is accepted, or between 0 and the estimate when it
is rejected. The interval therefore excludes 0 exactly when `WelchNull.p_value` is at or below
the threshold, by construction (the same function decides both), whatever the shape of the
p-value in the shift; `tests/unit/stats/test_studentised.py` checks the ends against brute
force.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from evalq.stats.permutation import (
    TOLERANCE,
    Method,
    PermutationNull,
    split_rows,
    two_sample_null,
)

RESOLUTION = 1e-6
"""The search for an end stops when its bracket is this narrow, relative to the data's scale
(its largest distance from the pooled mean, or the estimate): far below the digits shown."""
DOUBLINGS = 64
"""Steps outward, each twice the last, before an end is taken to be unbounded."""
FLAT = 1e-13
"""A squared standard error at most this share of the squared scale is 0 (constant groups'
sums of squares cancel to rounding noise, not to 0)."""

Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Splits:
    """Each split's Welch t as a function of the shift: ``t**2 = (a - delta b)**2 / (c0 +
    c1 delta + c2 delta**2)``, the numerator the difference of the groups' means, the
    denominator the squared standard error (each group's variance is a quadratic in the
    shift, since it holds some of the shifted values)."""

    a: Floats
    b: Floats
    c0: Floats
    c1: Floats
    c2: Floats

    def squared(self, shift: float, flat: float, tie: float) -> Floats:
        """``t**2`` of every split at ``shift``: infinite where the standard error is 0 and
        the means differ, 0 where both are 0."""
        difference = self.a - shift * self.b
        se2 = (self.c2 * shift + self.c1) * shift + self.c0
        zero = se2 <= flat
        with np.errstate(divide="ignore", invalid="ignore"):
            t2 = difference * difference / se2
        return np.where(zero, np.where(np.abs(difference) > tie, np.inf, 0.0), t2)


def _splits(sums: Floats, stay: Floats, totals: Floats, sizes: tuple[int, int]) -> Splits:
    """`Splits` from each split's first group's sum, sum of squares and sum of the first
    sample's values it holds (``sums``, one row per split), and the same three over all."""
    n, m = sizes
    first, squares, own = sums[:, 0], sums[:, 1], sums[:, 2]
    second, second_sq, second_own = totals[0] - first, totals[1] - squares, totals[2] - own
    left = n - stay  # the first sample's values in the second group
    w1 = 1 / (n * (n - 1)) if n > 1 else 0.0
    w2 = 1 / (m * (m - 1)) if m > 1 else 0.0
    return Splits(
        a=first / n - second / m,
        b=stay / n - left / m,
        c0=w1 * (squares - first * first / n) + w2 * (second_sq - second * second / m),
        c1=-2 * (w1 * (own - first * stay / n) + w2 * (second_own - second * left / m)),
        c2=w1 * (stay - stay * stay / n) + w2 * (left - left * left / m),
    )


@dataclass(frozen=True)
class WelchNull:
    """The splits of a two-sample permutation test of Welch's t, shiftable (module docstring).

    Attributes:
        splits: every rearranged split's t as a function of the shift.
        observed: the observed split's.
        estimate: the observed difference of means.
        scale: the centred data's largest absolute value (the unit of `RESOLUTION`; 1 when
            every value is tied).
        counted: 1 when the observed split is counted on top of random splits, else 0.
        method: exact enumeration, Monte Carlo, or no-difference (every value tied).
        seed: the seed of a Monte Carlo draw, else None.
    """

    splits: Splits
    observed: Splits
    estimate: float
    scale: float
    counted: int
    method: Method
    seed: int | None

    def p_value_at(self, shift: float) -> float:
        """The two-sided p-value of the shift ``shift`` (0: no difference)."""
        if self.method == "no-difference" and shift == 0:
            return 1.0
        flat, tie = FLAT * self.scale * self.scale, TOLERANCE * self.scale
        each = self.splits.squared(shift, flat, tie)
        observed = float(self.observed.squared(shift, flat, tie)[0])
        if math.isinf(observed):
            hits = int(np.count_nonzero(np.isinf(each)))
        else:
            hits = int(np.count_nonzero(each >= observed * (1 - TOLERANCE) ** 2))
        return (hits + self.counted) / (len(each) + self.counted)

    def p_value(self) -> float:
        """The two-sided p-value of no difference."""
        return self.p_value_at(0.0)

    def interval(
        self, threshold: float, *, bounds: tuple[float, float] | None = None
    ) -> tuple[float, float]:
        """The shifts this test does not reject at ``threshold`` (p > threshold): the interval
        at level ``1 - threshold``, clamped to ``bounds`` (the differences the score's scale
        allows) where the data cannot bound it. Its ends exclude 0 exactly when `p_value` <=
        ``threshold`` (module docstring)."""
        if not 0 < threshold < 1:
            raise ValueError("interval: threshold must be between 0 and 1")
        low, high = bounds if bounds is not None else (-math.inf, math.inf)

        def excess(shift: float) -> float:  # > 0: the shift is kept
            return self.p_value_at(shift) - threshold

        lower = _end(excess, self.estimate, -1.0, low, self.scale)
        upper = _end(excess, self.estimate, 1.0, high, self.scale)
        return max(lower, low), min(upper, high)


UnpairedNull = PermutationNull | WelchNull
"""An unpaired comparison's test: `WelchNull`, or with equal sizes the raw difference's null
(the same test)."""

Excess = Callable[[float], float]


def _end(excess: Excess, estimate: float, direction: float, bound: float, scale: float) -> float:
    """The end of the accepted shifts in ``direction`` from the estimate (module docstring)."""
    start, above = estimate, 1.0  # every split ties the observed at the estimate: p = 1
    if direction * (0.0 - estimate) >= 0:  # 0 lies this way (or is the estimate)
        at_zero = excess(0.0)
        if at_zero <= 0:
            return _edge(excess, (estimate, above), (0.0, at_zero), scale)
        start, above = 0.0, at_zero
    step, accepted = scale, (start, above)
    for _ in range(DOUBLINGS):
        probe = start + direction * step
        if direction * (probe - bound) >= 0:
            at_bound = excess(bound)
            return bound if at_bound > 0 else _edge(excess, accepted, (bound, at_bound), scale)
        found = excess(probe)
        if found <= 0:
            return _edge(excess, accepted, (probe, found), scale)
        accepted, step = (probe, found), step * 2
    return direction * math.inf


def _edge(
    excess: Excess, inside: tuple[float, float], outside: tuple[float, float], scale: float
) -> float:
    """A shift at the edge of the accepted ones between ``inside`` (kept: excess > 0) and
    ``outside`` (rejected), on the kept side: regula falsi on the p-value, Illinois-style
    (the end kept twice running has its excess halved), to `RESOLUTION` of the scale. The
    p-value is a step function of thousands of fine steps, nearly linear near an end, so this
    takes a third of the evaluations bisection does."""
    (x_in, g_in), (x_out, g_out) = inside, outside
    last = 0
    while abs(x_out - x_in) > RESOLUTION * scale:
        share = min(0.98, max(0.02, g_in / (g_in - g_out)))
        middle = x_in + share * (x_out - x_in)
        if middle in (x_in, x_out):
            middle = (x_in + x_out) / 2
            if middle in (x_in, x_out):
                break
        found = excess(middle)
        if found > 0:
            x_in, g_in = middle, found
            g_out, last = (g_out / 2 if last == 1 else g_out), 1
        else:
            x_out, g_out = middle, found
            g_in, last = (g_in / 2 if last == -1 else g_in), -1
    return x_in


def welch_null(
    x: Sequence[float], y: Sequence[float], *, resamples: int, seed: int
) -> UnpairedNull:
    """The permutation test of Welch's t of ``mean(x) - mean(y)`` (both samples non-empty):
    every split of the pooled values up to `evalq.stats.permutation.EXACT_SPLITS`, else
    ``resamples`` seeded random ones with the observed counted.

    With as many values a side, Welch's t orders the splits as the raw difference of means
    does, at every shift (module docstring), so that test's null is returned: the same p-values
    and interval, its ends in closed form."""
    n, m = len(x), len(y)
    if not n or not m:
        raise ValueError("welch_null: both samples need at least one value")
    if n == m:
        return two_sample_null(x, y, resamples=resamples, seed=seed)
    raw = np.asarray([*x, *y], dtype=np.float64)
    pooled = raw - math.fsum(raw) / (n + m)  # the test is the same on values moved together
    columns = np.stack([pooled, pooled * pooled, np.where(np.arange(n + m) < n, pooled, 0.0)], 1)
    rows, stay, counted, method, used = split_rows(n, m, resamples=resamples, seed=seed)
    identity = (np.arange(n + m) < n).astype(np.float64)[None, :]
    totals = columns.sum(axis=0)
    estimate = math.fsum(x) / n - math.fsum(y) / m
    return WelchNull(
        splits=_splits(rows @ columns, stay, totals, (n, m)),
        observed=_splits(identity @ columns, np.array([float(n)]), totals, (n, m)),
        estimate=estimate,
        scale=max(float(np.max(np.abs(pooled))), abs(estimate)) or 1.0,
        counted=counted,
        method="no-difference" if np.all(raw == raw[0]) else method,
        seed=used,
    )
