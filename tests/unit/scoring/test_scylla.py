"""Spec 003 per-run metrics."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalq.core.profile import Price, ScyllaProfile, load_profile
from evalq.core.results import ScyllaScores
from evalq.scoring.scylla import (
    composite,
    cost_of_pass,
    cost_usd,
    letter_grade,
    pass_rate,
    score_scylla_run,
)

PROFILE = ScyllaProfile()
unit = st.floats(min_value=0, max_value=1)


def test_spec_003_example_1_single_run() -> None:
    run = score_scylla_run(
        passed=True, impl_rate=0.85, cost_usd=0.50, duration_seconds=12.0, profile=PROFILE
    )
    assert run.pass_rate == 1.0
    assert run.cost_of_pass == 0.50  # 0.50 / 1.0
    assert run.composite == pytest.approx(0.925)  # (1.0 + 0.85) / 2
    assert run.grade == "B"  # docs/scoring.md: 0.925 is B, not the spec's first answer A


def test_pass_rate_is_binary() -> None:
    assert (pass_rate(True), pass_rate(False)) == (1.0, 0.0)


def test_cost_from_the_profile_prices() -> None:
    pricing = load_profile().pricing
    # 1M input x $15 + 1M output x $75
    assert cost_usd(1_000_000, 1_000_000, pricing["claude-opus-4.5"]) == pytest.approx(90.0)
    # 200k x $3/M + 10k x $15/M = 0.60 + 0.15
    assert cost_usd(200_000, 10_000, pricing["claude-sonnet-4"]) == pytest.approx(0.75)
    assert cost_usd(0, 0, pricing["gpt-4o"]) == 0.0
    with pytest.raises(ValueError):
        cost_usd(-1, 0, Price(input_per_mtok=1, output_per_mtok=1))


def test_cost_of_pass() -> None:
    assert cost_of_pass(1.0, 0.5) == 2.0
    assert cost_of_pass(0.5, 0.0) == math.inf
    for cost, rate in [(-1.0, 1.0), (math.nan, 1.0), (1.0, 1.5), (1.0, -0.1)]:
        with pytest.raises(ValueError):
            cost_of_pass(cost, rate)


def test_composite_weights_are_normalised_by_their_sum() -> None:
    # (1.0 x 3 + 0.5 x 1) / 4 = 0.875
    assert composite(1.0, 0.5, ScyllaProfile(pass_weight=3, impl_weight=1)) == 0.875
    # weights 2 + 2 give the plain mean, like 0.5 + 0.5
    assert composite(0.0, 0.6, ScyllaProfile(pass_weight=2, impl_weight=2)) == pytest.approx(0.3)


def test_composite_without_impl_rate_is_the_pass_rate() -> None:
    assert composite(1.0, None, PROFILE) == 1.0
    assert composite(0.0, None, PROFILE) == 0.0
    assert composite(1.0, None, ScyllaProfile(pass_weight=0, impl_weight=1)) is None


def test_composite_rejects_rates_outside_unit_interval() -> None:
    with pytest.raises(ValueError):
        composite(1.0, 1.2, PROFILE)


@pytest.mark.parametrize(
    ("score", "grade"),
    [
        (1.0, "A"),
        (0.95, "A"),
        (0.9499, "B"),
        (0.85, "B"),
        (0.85 - 1e-12, "B"),  # rounding noise below a threshold still reaches it
        (0.8499, "C"),
        (0.75, "C"),
        (0.65, "D"),
        (0.6499, "F"),
        (0.0, "F"),
    ],
)
def test_letter_grade_boundaries(score: float, grade: str) -> None:
    assert letter_grade(score, PROFILE) == grade


def test_letter_grades_come_from_the_profile() -> None:
    profile = ScyllaProfile(grades={"P": 0.5})
    assert letter_grade(0.5, profile) == "P"
    assert letter_grade(0.49, profile) == "F"


def test_failed_run_costs_infinity_per_pass_and_serialises() -> None:
    run = score_scylla_run(
        passed=False, impl_rate=0.4, cost_usd=0.2, duration_seconds=None, profile=PROFILE
    )
    assert run.composite == pytest.approx(0.2)  # (0 + 0.4) / 2
    assert run.grade == "F"
    assert run.cost_of_pass == math.inf
    data = run.model_dump(mode="json")
    assert data["cost_of_pass"] == "inf"
    json.dumps(data, allow_nan=False)


def test_run_without_cost_or_judge() -> None:
    run = score_scylla_run(
        passed=True, impl_rate=None, cost_usd=None, duration_seconds=3.0, profile=PROFILE
    )
    assert (run.composite, run.grade, run.cost_usd, run.cost_of_pass) == (1.0, "A", None, None)


def test_negative_duration_is_rejected() -> None:
    with pytest.raises(ValueError):
        score_scylla_run(
            passed=True, impl_rate=None, cost_usd=None, duration_seconds=-1, profile=PROFILE
        )


@given(st.booleans(), unit, st.floats(min_value=0.01, max_value=10), st.floats(0.01, 10))
def test_composite_lies_between_its_inputs(
    passed: bool, impl: float, pass_weight: float, impl_weight: float
) -> None:
    profile = ScyllaProfile(pass_weight=pass_weight, impl_weight=impl_weight)
    rate = pass_rate(passed)
    score = composite(rate, impl, profile)
    assert score is not None
    assert min(rate, impl) - 1e-12 <= score <= max(rate, impl) + 1e-12


@given(unit, unit)
def test_grade_is_monotone(a: float, b: float) -> None:
    order = ["F", "D", "C", "B", "A"]
    low, high = sorted((a, b))
    assert order.index(letter_grade(low, PROFILE)) <= order.index(letter_grade(high, PROFILE))


def test_run_round_trips_through_stored_json() -> None:
    run = score_scylla_run(
        passed=False, impl_rate=0.4, cost_usd=0.2, duration_seconds=5.0, profile=PROFILE
    )
    run = run.model_copy(update={"variant": "T1", "run_index": 3})
    stored = json.loads(run.model_dump_json())
    assert ScyllaScores.model_validate(stored) == run


@pytest.mark.parametrize("bad", [-0.1, 1.1, math.nan, math.inf])
def test_letter_grade_rejects_scores_outside_the_unit_interval(bad: float) -> None:
    with pytest.raises(ValueError, match="letter_grade"):
        letter_grade(bad, PROFILE)
