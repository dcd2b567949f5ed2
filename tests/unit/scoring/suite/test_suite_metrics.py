"""Spec 004 metric types, as fractions; an empty denominator is None."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalq.scoring.suite.metrics import (
    accuracy,
    behavior_coverage,
    pass_rate,
    precision,
    ratio,
    recall,
    safety_rate,
    token_efficiency,
)


def test_hand_computed_rates() -> None:
    assert pass_rate(17, 20) == 0.85
    assert accuracy(19, 20) == 0.95
    assert precision(9, 1) == 0.9  # 9 / (9 + 1)
    assert recall(6, 2) == 0.75  # 6 / (6 + 2)
    assert safety_rate(3, 4) == 0.75
    assert behavior_coverage(2, 5) == 0.4
    assert token_efficiency(0.9, 300) == pytest.approx(0.003)  # 0.9 / 300


def test_empty_denominators_are_not_applicable() -> None:
    assert pass_rate(0, 0) is None
    assert accuracy(0, 0) is None
    assert precision(0, 0) is None
    assert recall(0, 0) is None
    assert safety_rate(0, 0) is None  # no adversarial scenario: not 0, not a division error
    assert behavior_coverage(0, 0) is None
    assert token_efficiency(1.0, 0) is None


def test_zero_numerator_is_zero_not_none() -> None:
    assert precision(0, 3) == 0.0
    assert safety_rate(0, 2) == 0.0


@pytest.mark.parametrize(("part", "whole"), [(-1, 3), (1, -3), (4, 3)])
def test_impossible_counts_are_rejected(part: int, whole: int) -> None:
    with pytest.raises(ValueError):
        ratio(part, whole)


def test_token_efficiency_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        token_efficiency(-0.1, 10)
    with pytest.raises(ValueError):
        token_efficiency(1.0, -1)


@given(st.integers(0, 10_000), st.integers(0, 10_000))
def test_rates_are_fractions(a: int, b: int) -> None:
    part, whole = sorted((a, b))
    value = ratio(part, whole)
    assert (value is None) == (whole == 0)
    assert value is None or 0.0 <= value <= 1.0
    p = precision(a, b)
    assert p is None or 0.0 <= p <= 1.0
