"""Quantiles of Student's t distribution, in plain Python.

The confidence interval of every leaderboard needs one t value. ``scipy.stats.t.ppf`` (or
``scipy.special.stdtrit``) gives it, but importing scipy.special costs ~0.5 s (it loads
numpy.f2py and pydoc), paid by every `evalq leaderboard` and `evalq report` call; this module
costs nothing to import.

Method: for t > 0 the upper tail is ``P(T > t) = I_x(df/2, 1/2) / 2`` with ``x = df / (df + t^2)``
and ``I`` the regularized incomplete beta function, evaluated by its continued fraction
(modified Lentz, Numerical Recipes 3rd ed. section 6.4). The quantile is found by Newton's method
on that tail (the density is its derivative) from the normal quantile, kept inside a bracket by
bisection. It agrees with scipy.stats.t.ppf to 1e-9 relative up to a million degrees of freedom
(tests/unit/scoring/test_student_t.py).
"""

from __future__ import annotations

import math
from statistics import NormalDist

from evalq.core.errors import InvalidInput

_TINY = 1e-300
_EPS = 1e-16
_MAX_TERMS = 500


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (converges for x < (a+1)/(a+b+2))."""
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    fraction = d
    for m in range(1, _MAX_TERMS + 1):
        for numerator in (
            m * (b - m) * x / ((a - 1.0 + 2 * m) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1.0 + 2 * m)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            step = c * d
            fraction *= step
        if abs(step - 1.0) < _EPS:
            break
    return fraction


def regularized_beta(a: float, b: float, x: float) -> float:
    """``I_x(a, b)``, the regularized incomplete beta function, for a, b > 0 and 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def _upper_tail(t: float, df: float) -> float:
    """``P(T > t)`` for t >= 0: from ``x = df / (df + t^2)`` far in the tail, from
    ``1 - x = t^2 / (df + t^2)`` near the centre (where x rounds to 1)."""
    square = t * t
    if square < df:
        return 0.5 - 0.5 * regularized_beta(0.5, df / 2.0, square / (df + square))
    return 0.5 * regularized_beta(df / 2.0, 0.5, df / (df + square))


def _density(t: float, df: float) -> float:
    log_norm = math.lgamma((df + 1.0) / 2.0) - math.lgamma(df / 2.0) - 0.5 * math.log(df * math.pi)
    return math.exp(log_norm - (df + 1.0) / 2.0 * math.log1p(t * t / df))


def student_t_quantile(p: float, df: float) -> float:
    """The ``p``-quantile of Student's t with ``df`` degrees of freedom (``scipy.stats.t.ppf``).

    Raises:
        InvalidInput: ``p`` not strictly between 0 and 1, or ``df`` not positive.
    """
    if not 0.0 < p < 1.0:
        raise InvalidInput([("p", "must be strictly between 0 and 1")])
    if not df > 0.0:
        raise InvalidInput([("df", "must be positive")])
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -student_t_quantile(1.0 - p, df)
    tail = 1.0 - p  # find t > 0 with P(T > t) = tail
    low, high = 0.0, max(1.0, NormalDist().inv_cdf(p))
    while _upper_tail(high, df) > tail:
        low, high = high, 2.0 * high
    t = min(max(NormalDist().inv_cdf(p), low), high)
    for _ in range(200):
        excess = _upper_tail(t, df) - tail
        if excess > 0.0:
            low = t
        else:
            high = t
        step = excess / _density(t, df)  # the tail falls with slope -density
        candidate = t + step
        if not low < candidate < high:
            candidate = (low + high) / 2.0
        if abs(candidate - t) <= 1e-15 * max(1.0, abs(t)):
            return candidate
        t = candidate
    return t
