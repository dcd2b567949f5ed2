"""Spec 003 aggregate statistics."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalq.stats.statistics import Statistics, population_variance, summarize

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


def test_spec_003_example_2_ten_run_aggregation() -> None:
    stats = summarize([1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0])
    # sorted: two 0.0 then eight 1.0; median = (1.0 + 1.0) / 2; mean = 8 / 10
    assert stats.median == 1.0
    assert stats.mean == pytest.approx(0.8)
    assert stats.mode == 1.0
    assert (stats.min, stats.max, stats.count) == (0.0, 1.0, 10)
    # sqrt((2 * 0.8^2 + 8 * 0.2^2) / 10) = sqrt(0.16) = 0.4
    assert stats.std_dev == pytest.approx(0.4)


def test_odd_count_median_is_the_middle_value() -> None:
    stats = summarize([3.0, 1.0, 2.0])
    assert stats.median == 2.0
    # population variance ((1-2)^2 + 0 + (3-2)^2) / 3 = 2/3
    assert stats.std_dev == pytest.approx(math.sqrt(2 / 3))


def test_even_count_median_averages_the_middle_pair() -> None:
    assert summarize([4.0, 1.0, 2.0, 10.0]).median == 3.0  # (2 + 4) / 2


def test_mode_ties_take_the_smallest_value() -> None:
    assert summarize([0.5, 0.2, 0.5, 0.2, 0.9]).mode == 0.2


def test_population_not_sample_standard_deviation() -> None:
    # [0, 2]: population variance 1 (sample variance would be 2)
    assert summarize([0.0, 2.0]).std_dev == 1.0


def test_single_value() -> None:
    assert summarize([0.7]) == Statistics(0.7, 0.7, 0.7, 0.7, 0.7, 0.0, 1)


@pytest.mark.parametrize("values", [[], [math.nan], [1.0, math.inf]])
def test_empty_or_non_finite_raises(values: list[float]) -> None:
    with pytest.raises(ValueError):
        summarize(values)


def test_population_variance_spec_003_example_3() -> None:
    # mean 0.8125; (0.01265625 + 0.00015625 + 0.00140625 + 0.00765625) / 4 = 0.00546875
    variance = population_variance([0.70, 0.80, 0.85, 0.90])
    assert variance == pytest.approx(0.00546875)
    assert variance is not None and round(variance, 5) == 0.00547


def test_population_variance_empty_is_none() -> None:
    assert population_variance([]) is None


@given(st.lists(finite, min_size=1, max_size=40))
def test_statistics_lie_within_the_range(values: list[float]) -> None:
    s = summarize(values)
    assert s.min <= s.median <= s.max
    assert s.min <= s.mean <= s.max
    assert s.mode in values
    assert s.std_dev >= 0
    assert s.std_dev <= (s.max - s.min) + 1e-9
    assert s.count == len(values)


@given(st.lists(finite, min_size=1, max_size=40))
def test_order_does_not_matter(values: list[float]) -> None:
    assert summarize(values) == summarize(sorted(values, reverse=True))
