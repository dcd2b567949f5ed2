"""Spec 004 latency p95 (nearest rank) and its normalisation."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalq.scoring.suite.latency import latency_p95, latency_percentile, normalized_latency


def test_nearest_rank_p95() -> None:
    values = [float(v) for v in range(1, 101)]  # 1 .. 100
    assert latency_p95(values) == 95.0  # rank ceil(0.95 x 100) = 95
    # 20 values: rank ceil(0.95 x 20) = 19 -> the 19th smallest
    assert latency_p95([float(v) for v in range(20, 0, -1)]) == 19.0
    # fewer than 20 values: rank ceil(0.95 x 10) = 10 -> the maximum
    assert latency_p95([100.0, 200, 300, 400, 500, 600, 700, 800, 900, 5000]) == 5000.0
    assert latency_p95([42.0]) == 42.0


def test_other_percentiles() -> None:
    values = [10.0, 20.0, 30.0, 40.0]
    assert latency_percentile(values, 50) == 20.0  # rank ceil(2) = 2
    assert latency_percentile(values, 1) == 10.0  # rank ceil(0.04) = 1
    assert latency_percentile(values, 100) == 40.0


def test_no_latency_is_not_applicable() -> None:
    assert latency_p95([]) is None
    assert normalized_latency(None, 5000) is None


@pytest.mark.parametrize("bad", [[-1.0], [float("nan")], [float("inf")]])
def test_bad_latencies_are_rejected(bad: list[float]) -> None:
    with pytest.raises(ValueError):
        latency_p95(bad)


def test_bad_percentile_or_budget() -> None:
    with pytest.raises(ValueError):
        latency_percentile([1.0], 0)
    with pytest.raises(ValueError):
        normalized_latency(1.0, 0)


def test_normalized_latency() -> None:
    assert normalized_latency(0.0, 5000) == 0.0
    assert normalized_latency(1000.0, 5000) == 0.2
    assert normalized_latency(5000.0, 5000) == 1.0
    assert normalized_latency(12000.0, 5000) == 1.0  # capped: over budget is as bad as it gets


@given(st.lists(st.floats(0, 1e6), min_size=1, max_size=50))
def test_p95_is_an_observed_value_in_range(values: list[float]) -> None:
    p95 = latency_p95(values)
    assert p95 in values
    assert min(values) <= p95 <= max(values)
    assert sum(v <= p95 for v in values) >= 0.95 * len(values)


@given(st.floats(0, 1e6), st.floats(0, 1e6), st.floats(1, 1e5))
def test_normalized_latency_is_monotone_and_bounded(a: float, b: float, budget: float) -> None:
    low, high = sorted((a, b))
    n_low, n_high = normalized_latency(low, budget), normalized_latency(high, budget)
    assert n_low is not None and n_high is not None
    assert 0.0 <= n_low <= n_high <= 1.0
