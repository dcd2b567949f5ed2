"""Standard competition ranking (docs/scoring.md: 1, 1, 3 everywhere)."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalq.core.errors import InvalidInput
from evalq.stats.ranking import competition_ranks


def test_ties_share_the_best_rank_and_the_next_is_skipped() -> None:
    # 90, 90 are both beaten by nobody -> 1, 1; 80 is beaten by two -> 3; 70 by three -> 4.
    assert competition_ranks([90.0, 80.0, 90.0, 70.0]) == [1, 3, 1, 4]


def test_ascending_ranks_lowest_first() -> None:
    # lower is better: 70 -> 1, 80 -> 2, the two 90s -> 3, 3.
    assert competition_ranks([90.0, 80.0, 90.0, 70.0], descending=False) == [3, 2, 3, 1]


def test_all_tied() -> None:
    assert competition_ranks([5.0, 5.0, 5.0]) == [1, 1, 1]


def test_empty() -> None:
    assert competition_ranks([]) == []


def test_ndigits_ranks_displayed_ties_equal() -> None:
    # 80.004 and 80.001 both display as 80.00.
    assert competition_ranks([80.001, 80.004]) == [2, 1]
    assert competition_ranks([80.001, 80.004], ndigits=2) == [1, 1]


def test_nan_is_rejected() -> None:
    with pytest.raises(InvalidInput):
        competition_ranks([1.0, math.nan])


@given(st.lists(st.floats(min_value=-1e6, max_value=1e6), max_size=30))
def test_ranks_are_a_valid_competition_ranking(scores: list[float]) -> None:
    ranks = competition_ranks(scores)
    assert len(ranks) == len(scores)
    for score, rank in zip(scores, ranks, strict=True):
        # rank = 1 + number of strictly better scores
        assert rank == 1 + sum(1 for other in scores if other > score)
    # Ranks of equal scores are equal; better scores get strictly smaller ranks.
    for a in range(len(scores)):
        for b in range(len(scores)):
            if scores[a] == scores[b]:
                assert ranks[a] == ranks[b]
            elif scores[a] > scores[b]:
                assert ranks[a] < ranks[b]
    if scores:
        assert min(ranks) == 1
        # a rank r is held by exactly as many entries as tie at it, and the next one is r + that
        distinct = sorted(set(ranks))
        for r, nxt in itertools.pairwise(distinct):
            assert nxt == r + ranks.count(r)
