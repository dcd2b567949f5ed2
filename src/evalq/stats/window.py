"""A monitor's statistic over a window of runs: the mean, the pass rate, or a quantile.

The quantile is the linear interpolation between order statistics (Hyndman and Fan's type 7,
numpy's and R's default): with values sorted ``x[0] <= ... <= x[n-1]``, the ``q`` quantile is
``x[k] + (h - k) * (x[k+1] - x[k])`` with ``h = (n - 1) * q`` and ``k = floor(h)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from evalq.core.monitors import Statistic


def quantile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (type 7); ``values`` must not be empty."""
    ordered = sorted(values)
    h = (len(ordered) - 1) * q
    k = math.floor(h)
    upper = ordered[min(k + 1, len(ordered) - 1)]
    return ordered[k] + (h - k) * (upper - ordered[k])


def window_statistic(
    values: Sequence[float],
    passed: Sequence[bool],
    *,
    statistic: Statistic,
    q: float | None = None,
) -> float | None:
    """The statistic of one window; None when the window is empty.

    Args:
        values: the runs' ranking values (mean, quantile).
        passed: whether each run passed (pass_rate: the share that did).
        statistic: which one.
        q: the quantile asked for (statistic ``quantile``).
    """
    if statistic == "pass_rate":
        return sum(passed) / len(passed) if passed else None
    if not values:
        return None
    if statistic == "quantile":
        if q is None:
            raise ValueError("a quantile needs q")
        return quantile(values, q)
    return math.fsum(values) / len(values)
