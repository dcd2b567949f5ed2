"""How many runs a comparison needs to detect a difference: power of the paired test.

evalq decides "is the difference real?" with a permutation test of the mean difference
(`evalq.stats.comparison`). Its power is planned here with the test it approximates, the
t-test on the paired differences: with ``n`` pairs whose differences have standard deviation
``sd``, the statistic follows a noncentral t with ``n - 1`` degrees of freedom and
noncentrality ``detect * sqrt(n) / sd``. The count returned is the smallest ``n`` whose
two-sided power at ``alpha`` reaches ``power``, and never below the fewest pairs at which the
sign-flip test can reject at ``alpha`` at all (its smallest p-value is ``2 / 2**n``) nor
below `evalq.stats.contrast.MIN_PAIRS`, under which evalq draws no verdict.

`tests/unit/stats/test_power.py` checks the counts by simulating the permutation test itself.
"""

from __future__ import annotations

import math

from evalq.stats.contrast import MIN_PAIRS

POWER = 0.8
"""The power planned for unless asked otherwise."""
MAX_RUNS = 100_000
"""Counts above this are reported as not reachable (None)."""


def sign_flip_floor(alpha: float) -> int:
    """Fewest pairs at which the two-sided sign-flip test can reject at ``alpha`` (and at
    least `MIN_PAIRS`, the fewest evalq draws a verdict from)."""
    n = 1
    while 2.0 / 2**n > alpha:
        n += 1
    return max(n, MIN_PAIRS)


def paired_power(n: int, *, sd: float, detect: float, alpha: float) -> float:
    """Two-sided power of the t-test on ``n`` paired differences of standard deviation ``sd``
    when their true mean is ``detect``."""
    from scipy import stats  # loaded by a plan, not by every read that imports this

    if n < 2:
        return 0.0
    if sd == 0:
        return 1.0
    df = n - 1
    critical = stats.t.ppf(1 - alpha / 2, df)
    shift = abs(detect) * math.sqrt(n) / sd
    upper = stats.nct.sf(critical, df, shift)
    lower = stats.nct.cdf(-critical, df, shift)
    return float(upper + lower)


def pairs_needed(*, sd: float, detect: float, alpha: float, power: float = POWER) -> int | None:
    """The fewest pairs whose paired test detects a mean difference ``detect`` with ``power``
    at two-sided ``alpha``; None when more than `MAX_RUNS` would be needed.

    Raises:
        ValueError: ``detect`` not above 0, ``sd`` negative, ``alpha`` or ``power`` outside (0, 1).
    """
    from scipy import stats  # loaded by a plan, not by every read that imports this

    if not detect > 0:
        raise ValueError("detect must be above 0")
    if not sd >= 0:
        raise ValueError("sd must be 0 or more")
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError("alpha and power must be between 0 and 1")
    floor = sign_flip_floor(alpha)
    if sd == 0:
        return floor
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    guess = max(floor, math.ceil(float(z * sd / detect) ** 2))
    if guess > MAX_RUNS:
        return None
    n = guess
    # the normal guess is a little low (t has fatter tails): step up, then check below
    while paired_power(n, sd=sd, detect=detect, alpha=alpha) < power:
        n += 1
        if n > MAX_RUNS:
            return None
    while n > floor and paired_power(n - 1, sd=sd, detect=detect, alpha=alpha) >= power:
        n -= 1
    return n
