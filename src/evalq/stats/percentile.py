"""Percentile rank of a score among a group of scores (spec 000, "Percentile Calculation").

evalq replaces the spec's ``sorted.index(score) / n``, which gives the lowest of tied scores
the rank of the first tie and can never reach 100, with the mid-rank form (docs/scoring.md)::

    percentile = 100 * (others strictly below + 0.5 * others tied) / (n - 1)

where "others" are the n - 1 scores other than the one being placed. The best of several distinct
scores is 100, the worst 0, and tied scores share one value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from evalq.core.errors import InvalidInput

EMPTY_PERCENTILE = 50.0
"""Percentile when there are no scores at all (the spec's value)."""
ALONE_PERCENTILE = 100.0
"""Percentile of the only score in a group (docs/scoring.md)."""


def percentile(score: float, all_scores: Sequence[float]) -> float:
    """Mid-rank percentile of ``score`` among ``all_scores``, in [0, 100].

    Args:
        score: the score to place.
        all_scores: every score of the group, including ``score`` itself once.

    Returns:
        50.0 for an empty group, 100.0 when ``score`` is the only one, otherwise
        ``100 * (below + tied / 2) / (n - 1)`` counted over the other n - 1 scores. Unrounded:
        callers round for display only.

    Raises:
        InvalidInput: a score is not finite, or ``score`` is not among ``all_scores``.
    """
    if not all_scores:
        return EMPTY_PERCENTILE
    if not math.isfinite(score) or any(not math.isfinite(s) for s in all_scores):
        raise InvalidInput([("scores", "every score must be a finite number")])
    if score not in all_scores:
        raise InvalidInput([("score", "must be one of all_scores (the group includes it once)")])
    n = len(all_scores)
    if n == 1:
        return ALONE_PERCENTILE
    below = sum(1 for s in all_scores if s < score)
    tied_others = sum(1 for s in all_scores if s == score) - 1
    return 100.0 * (below + 0.5 * tied_others) / (n - 1)
