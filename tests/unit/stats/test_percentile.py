"""Mid-rank percentile (docs/scoring.md replaces the spec's sorted.index form)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalq.core.errors import InvalidInput
from evalq.stats.percentile import percentile


def test_hand_computed_values() -> None:
    scores = [10.0, 20.0, 20.0, 30.0]
    # 10: 0 below, 0 tied others -> 100 * 0 / 3 = 0
    assert percentile(10.0, scores) == 0.0
    # 20: 1 below, 1 tied other -> 100 * (1 + 0.5) / 3 = 50
    assert percentile(20.0, scores) == pytest.approx(50.0)
    # 30: 3 below -> 100 * 3 / 3 = 100
    assert percentile(30.0, scores) == 100.0


def test_spec_form_would_differ() -> None:
    # The spec's sorted.index form gives the best of four 75 (index 3 / 4); mid-rank gives 100.
    assert percentile(4.0, [1.0, 2.0, 3.0, 4.0]) == 100.0
    # Two scores: 100 * 1 / 1 and 0.
    assert percentile(2.0, [1.0, 2.0]) == 100.0
    assert percentile(1.0, [1.0, 2.0]) == 0.0


def test_all_tied_is_the_middle() -> None:
    # 0 below, 2 tied others -> 100 * 1 / 2 = 50
    assert percentile(7.0, [7.0, 7.0, 7.0]) == 50.0


def test_single_score_is_100_and_empty_is_50() -> None:
    assert percentile(42.0, [42.0]) == 100.0
    assert percentile(42.0, []) == 50.0


def test_score_must_be_in_the_group() -> None:
    with pytest.raises(InvalidInput):
        percentile(5.0, [1.0, 2.0])


finite = st.floats(min_value=0, max_value=100)


@given(st.lists(finite, max_size=20), finite)
def test_percentile_in_range(others: list[float], score: float) -> None:
    assert 0.0 <= percentile(score, [*others, score]) <= 100.0


@given(st.lists(finite, max_size=20), finite, finite)
def test_percentile_is_monotone_in_score(others: list[float], a: float, b: float) -> None:
    low, high = sorted((a, b))
    assert percentile(low, [*others, low]) <= percentile(high, [*others, high])
