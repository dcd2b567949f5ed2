"""Student-t confidence interval (docs/scoring.md replaces the spec's fixed t = 2.776)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalq.core.errors import InvalidInput
from evalq.stats.confidence import confidence_interval


def test_five_scores_hand_computed() -> None:
    # mean 30, stdev sqrt(((-20)^2 + (-10)^2 + 0 + 10^2 + 20^2) / 4) = sqrt(250) = 15.8114
    # t(0.975, df=4) = 2.77645; margin = 2.77645 * 15.8114 / sqrt(5) = 19.6324
    ci = confidence_interval([10.0, 20.0, 30.0, 40.0, 50.0])
    assert ci.enough_data
    assert ci.mean == pytest.approx(30.0)
    assert ci.low == pytest.approx(10.3676, abs=1e-4)
    assert ci.high == pytest.approx(49.6324, abs=1e-4)


def test_ten_scores_use_nine_degrees_of_freedom_not_2_776() -> None:
    # 0, 10, ..., 90: mean 45, stdev sqrt(8250 / 9) = 30.2765
    # t(0.975, df=9) = 2.26216; margin = 2.26216 * 30.2765 / sqrt(10) = 21.6585
    # (the spec's 2.776 would give a margin of 26.58)
    ci = confidence_interval([float(x) for x in range(0, 100, 10)])
    assert ci.as_tuple() == pytest.approx((23.3415, 66.6585), abs=1e-4)


def test_level_changes_t() -> None:
    # t(0.95, df=4) = 2.13185; margin = 2.13185 * 7.07107 = 15.0744
    ci = confidence_interval([10.0, 20.0, 30.0, 40.0, 50.0], level=0.90)
    assert ci.as_tuple() == pytest.approx((14.9256, 45.0744), abs=1e-4)


def test_clamped_to_range() -> None:
    # mean 80, stdev 10, t(0.975, 2) = 4.30265; margin = 4.30265 * 10 / sqrt(3) = 24.8414
    # -> (55.1586, 104.84) and the high bound is clamped to 100.
    ci = confidence_interval([70.0, 80.0, 90.0])
    assert ci.low == pytest.approx(55.1586, abs=1e-4)
    assert ci.high == 100.0


@pytest.mark.parametrize("scores", [[], [50.0], [40.0, 60.0]])
def test_fewer_than_three_is_not_enough_data(scores: list[float]) -> None:
    ci = confidence_interval(scores)
    assert ci.as_tuple() == (0.0, 100.0)
    assert not ci.enough_data
    assert ci.mean is None


def test_identical_scores_have_zero_width() -> None:
    assert confidence_interval([60.0, 60.0, 60.0]).as_tuple() == (60.0, 60.0)


def test_custom_bounds() -> None:
    assert confidence_interval([0.5], bounds=(0.0, 1.0)).as_tuple() == (0.0, 1.0)


@pytest.mark.parametrize("level", [0.0, 1.0, 1.5])
def test_bad_level(level: float) -> None:
    with pytest.raises(InvalidInput):
        confidence_interval([1.0, 2.0, 3.0], level=level)


def test_nan_rejected() -> None:
    with pytest.raises(InvalidInput):
        confidence_interval([1.0, 2.0, math.nan])


@given(st.lists(st.floats(min_value=0, max_value=100), max_size=40))
def test_interval_within_range_and_ordered(scores: list[float]) -> None:
    ci = confidence_interval(scores)
    assert 0.0 <= ci.low <= ci.high <= 100.0
    if ci.mean is not None:
        assert ci.low <= ci.mean + 1e-9 and ci.mean - 1e-9 <= ci.high
