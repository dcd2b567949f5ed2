"""Permutation tests of a mean difference, and the intervals got by inverting them.

One question, one answer: "is X better than Y" is the permutation test of the mean difference,
and the interval shown beside its verdict is the set of differences that same test does not
reject (Hartigan 1969; Ernst 2004, "Permutation methods", s. 3.3). So the interval excludes 0
exactly when the test rejects at the level it was drawn at: they cannot disagree.

Both tests share one shape. Shifting the data by ``delta`` (a paired difference ``d - delta``,
or the first sample ``x - delta``) makes the observed statistic ``|a0 - delta * b0|`` and each
rearrangement's ``|a_s - delta * b_s|``, with ``|b_s| < b0`` for every rearrangement but the
observed one (and its mirror, which always ties it). A rearrangement therefore ties or beats the
observed on one interval of shifts around the estimate ``a0 / b0``, whose ends are where the two
absolute values cross (`PermutationNull.crossings`); the p-value of a shift is the share of
rearrangements whose interval holds it, falls as the shift moves away from the estimate, and the
accepted shifts form one interval, read off the crossings in O(N log N).

- **sign flip** (paired): rearrangements flip the signs of the differences; ``a_s = sum(s d)``,
  ``b_s = sum(s)``, ``b0 = n``. Exact (all ``2**n``) up to `EXACT_PAIRS` pairs. It is also the
  studentised test: a sign flip keeps the differences' sum of squares ``Q``, and the paired
  t, ``t**2 = (n - 1) S**2 / (n Q - S**2)``, grows with ``|S|``, so flipping signs of the
  one-sample t orders the rearrangements as flipping signs of the sum does: the same p-value
  and interval (`tests/unit/stats/test_studentised.py`).
- **two samples** (unpaired; with unequal sizes comparisons permute Welch's t instead,
  `evalq.stats.studentised`, which with equal sizes is this test): rearrangements reassign the
  pooled values to the two groups;
  ``a_s`` is the difference of the groups' means and ``b_s = j/n - (n - j)/m`` when ``j`` of the
  first group's ``n`` values stay in it. Exact (every split) up to `EXACT_SPLITS` splits.

Above those, ``resamples`` seeded random rearrangements, the observed one counted
(``(1 + hits) / (1 + resamples)``: a valid p-value, never 0).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations
from typing import Literal

import numpy as np
import numpy.typing as npt

EXACT_PAIRS = 16
"""Up to this many pairs the sign-flip test enumerates all 2**n sign assignments."""
EXACT_SPLITS = 200_000
"""Up to this many ways to split the pooled values the two-sample test enumerates them all
(10 runs a side: 184,756)."""
TOLERANCE = 1e-9
"""Relative tolerance under which a crossing is the shift 0 itself (sums of the same values in
another order differ in their last bits; a tie is a tie)."""

Method = Literal["exact", "monte-carlo", "no-difference"]


@dataclass(frozen=True)
class PermutationNull:
    """The rearrangements of a permutation test, shiftable (module docstring).

    Attributes:
        a / b: each rearrangement's statistic at shift 0 and its slope in the shift.
        always: rearrangements that tie the observed at every shift (itself, its mirror).
        a0 / b0: the observed statistic at shift 0 and its slope (b0 > 0).
        counted: 1 when the observed is counted on top of random rearrangements, else 0.
        method: exact enumeration, Monte Carlo, or no-difference (every value tied).
        seed: the seed of a Monte Carlo draw, else None.
    """

    a: npt.NDArray[np.float64]
    b: npt.NDArray[np.float64]
    always: npt.NDArray[np.bool_]
    a0: float
    b0: float
    counted: int
    method: Method
    seed: int | None

    @property
    def estimate(self) -> float:
        """The observed mean difference (the shift at which the observed statistic is 0)."""
        return self.a0 / self.b0

    def crossings(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Each rearrangement's interval of shifts on which it ties or beats the observed;
        ends within `TOLERANCE` of 0 are 0 exactly, so that the test at shift 0 and the
        interval read the same ties."""
        centre = self.b0 * self.estimate
        with np.errstate(divide="ignore", invalid="ignore"):
            one = (self.a + centre) / (self.b0 + self.b)
            two = (centre - self.a) / (self.b0 - self.b)
        low = np.where(self.always, -np.inf, np.minimum(one, two))
        high = np.where(self.always, np.inf, np.maximum(one, two))
        scale = TOLERANCE * max(
            1e-300, abs(self.estimate), float(np.max(np.abs(self.a), initial=0))
        )
        low[np.abs(low) <= scale] = 0.0
        high[np.abs(high) <= scale] = 0.0
        return low, high

    def p_value(self) -> float:
        """The two-sided p-value of shift 0 (no difference)."""
        if self.method == "no-difference":
            return 1.0
        low, high = self.crossings()
        hits = int(np.count_nonzero((low <= 0) & (high >= 0)))
        return self._p(hits)

    def _p(self, hits: int) -> float:
        return (hits + self.counted) / (len(self.a) + self.counted)

    def interval(
        self, threshold: float, *, bounds: tuple[float, float] | None = None
    ) -> tuple[float, float]:
        """The shifts this test does not reject at ``threshold`` (p > threshold): the interval
        at level ``1 - threshold``. Clamped to ``bounds`` (the differences the score's scale
        allows) where the data cannot bound it (too few values for any rejection).

        Its ends exclude 0 exactly when `p_value` <= ``threshold``.
        """
        if not 0 < threshold < 1:
            raise ValueError("interval: threshold must be between 0 and 1")
        low, high = self.crossings()
        need = self._needed(threshold)
        if need == 0 or need > len(low):
            lower, upper = (-math.inf, math.inf) if need == 0 else (self.estimate,) * 2
        else:
            lower = float(np.sort(low)[need - 1])
            upper = float(-np.sort(-high)[need - 1])
        if bounds is not None:
            lower, upper = max(lower, bounds[0]), min(upper, bounds[1])
        return lower, upper

    def _needed(self, threshold: float) -> int:
        """The fewest rearrangements holding a shift for its p-value to exceed ``threshold``
        (computed with the very expression `p_value` uses, so the two agree to the bit)."""
        total = len(self.a)
        need = max(0, min(total, int(threshold * (total + self.counted)) - self.counted))
        while need > 0 and self._p(need - 1) > threshold:
            need -= 1
        while need <= total and self._p(need) <= threshold:
            need += 1
        return need


@lru_cache(maxsize=32)
def _signs(n: int) -> npt.NDArray[np.float64]:
    bits = (np.arange(2**n)[:, None] >> np.arange(n)) & 1
    return (1 - 2 * bits).astype(np.float64)


def sign_flip_null(differences: Sequence[float], *, resamples: int, seed: int) -> PermutationNull:
    """The sign-flip test's rearrangements of paired ``differences`` (at least one)."""
    d = np.asarray(differences, dtype=np.float64)
    n = len(d)
    if n == 0:
        raise ValueError("sign_flip_null: no pairs")
    if n <= EXACT_PAIRS:
        signs, counted, method, used = _signs(n), 0, "exact", None
    else:
        rng = np.random.default_rng(seed)
        signs = (1 - 2 * rng.integers(0, 2, size=(resamples, n))).astype(np.float64)
        counted, method, used = 1, "monte-carlo", seed
    slopes = signs.sum(axis=1)
    return PermutationNull(
        a=signs @ d,
        b=slopes,
        always=np.abs(slopes) == n,
        a0=float(math.fsum(d)),
        b0=float(n),
        counted=counted,
        method="no-difference" if not np.any(d) else method,  # type: ignore[arg-type]
        seed=used,
    )


@lru_cache(maxsize=8)
def _splits(n: int, m: int) -> npt.NDArray[np.bool_]:
    """Every way to choose the first group's ``n`` of ``n + m`` pooled values, as rows of
    flags (kept as booleans: 3.7 MB for 10 runs a side, reused by every pair of that size)."""
    chosen = np.fromiter(
        (i for combo in combinations(range(n + m), n) for i in combo),
        dtype=np.int64,
        count=math.comb(n + m, n) * n,
    ).reshape(-1, n)
    rows = np.zeros((len(chosen), n + m), dtype=np.bool_)
    np.put_along_axis(rows, chosen, True, axis=1)
    return rows


@lru_cache(maxsize=2)
def _split_values(n: int, m: int) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """`_splits` as the 0/1 floats the statistic multiplies (the same product, without
    converting the flags on every call: a board compares every pair of its variants, each
    twice, at one size), and how many of the first group each split keeps. Two sizes kept:
    30 MB each at 10 runs a side."""
    rows = _splits(n, m)
    return rows.astype(np.float64), rows[:, :n].sum(axis=1).astype(np.float64)


def split_rows(
    n: int, m: int, *, resamples: int, seed: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], int, Method, int | None]:
    """The splits of ``n + m`` pooled values a two-sample test rearranges: rows of 0/1 (1: in
    the first group), how many of the first ``n`` each keeps there, whether the observed split
    is counted on top (1 for random splits), the method and the seed used (None when exact).
    Every split up to `EXACT_SPLITS`, else ``resamples`` seeded random ones."""
    if math.comb(n + m, n) <= EXACT_SPLITS:
        flags, stay = _split_values(n, m)
        return flags, stay, 0, "exact", None
    rng = np.random.default_rng(seed)
    order = np.argsort(rng.random((resamples, n + m)), axis=1)[:, :n]
    rows = np.zeros((resamples, n + m), dtype=np.bool_)
    np.put_along_axis(rows, order, True, axis=1)
    return (
        rows.astype(np.float64),
        rows[:, :n].sum(axis=1).astype(np.float64),
        1,
        "monte-carlo",
        seed,
    )


def two_sample_null(
    x: Sequence[float], y: Sequence[float], *, resamples: int, seed: int
) -> PermutationNull:
    """The two-sample test's rearrangements of ``mean(x) - mean(y)`` (both non-empty).

    Exact when the two sides share one distribution. An unpaired comparison decides with the
    same splits of Welch's t (`evalq.stats.studentised.welch_null`), which also holds as n
    grows when the spreads differ, and which is this test when the sizes are equal."""
    n, m = len(x), len(y)
    if not n or not m:
        raise ValueError("two_sample_null: both samples need at least one value")
    pooled = np.asarray([*x, *y], dtype=np.float64)
    rows, stay, counted, method, used = split_rows(n, m, resamples=resamples, seed=seed)
    inside = rows @ pooled
    total = float(math.fsum(pooled))
    observed = math.fsum(x) / n - math.fsum(y) / m
    return PermutationNull(
        a=inside / n - (total - inside) / m,
        b=stay / n - (n - stay) / m,
        always=(stay == n) | ((stay == 0) & (n == m)),
        a0=observed,
        b0=1.0,
        counted=counted,
        method="no-difference" if np.all(pooled == pooled[0]) else method,
        seed=used,
    )
