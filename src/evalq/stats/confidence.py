"""Confidence interval of a mean score (spec 000, "Confidence Intervals").

The spec uses t = 2.776 for every n < 30, which is the 95% value for 4 degrees of freedom only.
evalq uses Student's t with n - 1 degrees of freedom at the requested level, keeps the spec's
"not enough data" answer (0, 100) below three scores and clamps the bounds to the score range
(docs/scoring.md, "Departures from the specifications").
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from evalq.core.errors import InvalidInput
from evalq.stats.student_t import student_t_quantile

MIN_SCORES = 3
"""Fewer scores than this: the interval is the whole range, ``enough_data`` False."""


@dataclass(frozen=True)
class ConfidenceInterval:
    """A two-sided confidence interval for the mean of a group of scores.

    Attributes:
        low: lower bound, clamped to the score range.
        high: upper bound, clamped to the score range.
        mean: the sample mean; None when there were too few scores.
        enough_data: False when fewer than `MIN_SCORES` scores were given (the bounds are then
            the whole range).
    """

    low: float
    high: float
    mean: float | None
    enough_data: bool

    def as_tuple(self) -> tuple[float, float]:
        """The spec's ``(low, high)`` form."""
        return (self.low, self.high)


def confidence_interval(
    scores: Sequence[float], level: float = 0.95, *, bounds: tuple[float, float] = (0.0, 100.0)
) -> ConfidenceInterval:
    """Student-t confidence interval for the mean of ``scores``.

    ``mean +- t(1 - (1 - level) / 2, n - 1) * stdev / sqrt(n)``, with the sample standard
    deviation (n - 1 denominator), clamped to ``bounds``.

    Args:
        scores: the scores; fewer than three give ``bounds`` with ``enough_data=False``.
        level: confidence level, strictly between 0 and 1 (the profile's
            ``arena.confidence_level``).
        bounds: the range the scores live in; the interval is clamped to it.

    Raises:
        InvalidInput: ``level`` outside (0, 1), bounds reversed, or a score not finite.
    """
    low_bound, high_bound = bounds
    if not 0.0 < level < 1.0:
        raise InvalidInput([("level", "must be strictly between 0 and 1")])
    if not low_bound <= high_bound:
        raise InvalidInput([("bounds", "low must not exceed high")])
    if any(not math.isfinite(s) for s in scores):
        raise InvalidInput([("scores", "every score must be a finite number")])
    n = len(scores)
    if n < MIN_SCORES:
        return ConfidenceInterval(low_bound, high_bound, None, enough_data=False)
    mean = statistics.fmean(scores)
    return _interval(n, mean, statistics.stdev(scores), level, bounds)


def interval_from_moments(
    n: int,
    mean: float | None,
    squares: float,
    level: float = 0.95,
    *,
    bounds: tuple[float, float] = (0.0, 100.0),
) -> ConfidenceInterval:
    """`confidence_interval` of ``n`` scores given by their mean and the sum of their squared
    deviations from it (what a database aggregates without returning the scores).

    Raises:
        InvalidInput: ``level`` outside (0, 1), or bounds reversed.
    """
    low_bound, high_bound = bounds
    if not 0.0 < level < 1.0:
        raise InvalidInput([("level", "must be strictly between 0 and 1")])
    if not low_bound <= high_bound:
        raise InvalidInput([("bounds", "low must not exceed high")])
    if n < MIN_SCORES or mean is None:
        return ConfidenceInterval(low_bound, high_bound, None, enough_data=False)
    return _interval(n, mean, math.sqrt(max(0.0, squares) / (n - 1)), level, bounds)


def _interval(
    n: int, mean: float, stdev: float, level: float, bounds: tuple[float, float]
) -> ConfidenceInterval:
    """``mean +- t * stdev / sqrt(n)``, clamped to ``bounds``."""
    low_bound, high_bound = bounds
    t_value = student_t_quantile(0.5 + level / 2.0, n - 1)
    margin = t_value * stdev / math.sqrt(n)
    low = min(high_bound, max(low_bound, mean - margin))
    high = max(low_bound, min(high_bound, mean + margin))
    return ConfidenceInterval(low, high, mean, enough_data=True)
