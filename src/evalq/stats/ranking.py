"""Standard competition ranking ("1224"): equal scores share a rank, the next rank skips.

A departure from spec 000 (docs/scoring.md): every ranking evalq publishes - the overall
ranking and each category ranking - uses this rule, so three runs scoring 90, 90, 80 rank 1, 1, 3.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypeVar

from evalq.core.errors import InvalidInput

T = TypeVar("T")


def competition_ranks(
    scores: Sequence[float], *, descending: bool = True, ndigits: int | None = None
) -> list[int]:
    """Rank each score by standard competition ranking, in the order the scores were given.

    A score's rank is 1 + the number of scores strictly better than it, so ties share the best
    rank and the following rank is skipped (90, 90, 80 -> 1, 1, 3).

    Args:
        scores: the scores to rank; an empty sequence gives an empty list.
        descending: True when a higher score is better (every evalq score); False for figures
            where lower is better.
        ndigits: compare scores rounded to this many decimals, so scores that are displayed
            equal also rank equal; None compares the exact values.

    Returns:
        One rank per score, aligned with ``scores``.

    Raises:
        InvalidInput: a score is NaN or infinite.
    """
    if any(not math.isfinite(s) for s in scores):
        raise InvalidInput([("scores", "every score must be a finite number")])
    keys = [round(s, ndigits) if ndigits is not None else s for s in scores]
    ordered = sorted(keys, reverse=descending)
    first_position: dict[float, int] = {}
    for position, key in enumerate(ordered, start=1):
        first_position.setdefault(key, position)
    return [first_position[key] for key in keys]
