"""Spec 001 PeerRead composite and recommendation."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalq.core.profile import PeerReadProfile
from evalq.scoring.peerread import peerread_composite, recommendation

SPEC_INPUTS = (
    "time_taken",
    "task_success",
    "coordination_quality",
    "tool_efficiency",
    "planning_rationality",
    "output_similarity",
)
PROFILE = PeerReadProfile(weights=dict.fromkeys(SPEC_INPUTS, 0.167))  # spec 001's six weights
FULL = {
    "time_taken": 0.9,
    "task_success": 0.8,
    "coordination_quality": 0.7,
    "tool_efficiency": 0.6,
    "planning_rationality": 0.5,
    "output_similarity": 0.4,
}


def test_judge_present_equal_weights_are_the_plain_mean() -> None:
    score = peerread_composite(FULL, PROFILE)
    # 0.167 x 6 = 1.002 is normalised away: (0.9+0.8+0.7+0.6+0.5+0.4) / 6 = 3.9 / 6 = 0.65
    assert score.composite == pytest.approx(0.65)
    assert (score.recommendation, score.recommendation_weight) == ("weak_accept", 0.7)
    assert score.missing == ()
    assert set(score.used) == set(FULL)
    assert score.inputs == FULL


def test_judge_skipped_renormalises_over_the_other_five() -> None:
    score = peerread_composite({**FULL, "planning_rationality": None}, PROFILE)
    # (0.9 + 0.8 + 0.7 + 0.6 + 0.4) / 5 = 3.4 / 5 = 0.68, not 3.4 / 6 = 0.567
    assert score.composite == pytest.approx(0.68)
    assert score.missing == ("planning_rationality",)
    assert "planning_rationality" not in score.used


def test_judge_failed_without_a_value_is_the_same() -> None:
    inputs = {k: v for k, v in FULL.items() if k != "planning_rationality"}
    score = peerread_composite(inputs, PROFILE)
    assert score.composite == pytest.approx(0.68)
    assert score.missing == ("planning_rationality",)


def test_the_default_profile_adds_the_judges_review_rubrics_at_the_same_weight() -> None:
    weights = PeerReadProfile().weights
    assert set(weights) == {*SPEC_INPUTS, "technical_accuracy", "constructiveness"}
    assert set(weights.values()) == {0.167}


def test_no_inputs_gives_no_composite() -> None:
    score = peerread_composite(dict.fromkeys(FULL), PROFILE)
    assert (score.composite, score.recommendation, score.recommendation_weight) == (None,) * 3
    assert score.used == ()
    assert len(score.missing) == 6


def test_time_taken_is_not_normalised_again() -> None:
    # already 1 / (1 + ln(1 + t)); a second normalisation would move the mean away from 0.5
    assert peerread_composite(dict.fromkeys(FULL, 0.5), PROFILE).composite == pytest.approx(0.5)
    only_time = peerread_composite({"time_taken": 0.3}, PROFILE)
    assert only_time.composite == pytest.approx(0.3)


def test_unequal_weights_from_the_profile() -> None:
    profile = PeerReadProfile(weights={"task_success": 3.0, "output_similarity": 1.0})
    score = peerread_composite({"task_success": 1.0, "output_similarity": 0.0}, profile)
    assert score.composite == 0.75  # (1 x 3 + 0 x 1) / 4
    assert (score.recommendation, score.recommendation_weight) == ("weak_accept", 0.7)


def test_rounding_noise_does_not_drop_a_label() -> None:
    # (0.7 x 0.167 + 0.9 x 0.167) / 0.334 evaluates to 0.7999999999999999 in floating point
    score = peerread_composite({"task_success": 0.7, "output_similarity": 0.9}, PROFILE)
    assert score.composite is not None and score.composite < 0.8
    assert score.composite == pytest.approx(0.8)
    assert score.recommendation == "accept"


@pytest.mark.parametrize(
    ("score", "label", "weight"),
    [
        (1.0, "accept", 1.0),
        (0.8, "accept", 1.0),
        (0.7999, "weak_accept", 0.7),
        (0.6, "weak_accept", 0.7),
        (0.5999, "weak_reject", -0.7),
        (0.4, "weak_reject", -0.7),
        (0.3999, "reject", -1.0),
        (0.0, "reject", -1.0),
    ],
)
def test_recommendation_mapping(score: float, label: str, weight: float) -> None:
    assert recommendation(score, PROFILE) == (label, weight)


def test_recommendation_thresholds_come_from_the_profile() -> None:
    profile = PeerReadProfile(accept=0.9, weak_accept=0.5, weak_reject=0.2)
    assert recommendation(0.85, profile) == ("weak_accept", 0.7)
    assert recommendation(0.3, profile) == ("weak_reject", -0.7)


@pytest.mark.parametrize("bad", [1.5, -0.2, math.nan, math.inf])
def test_out_of_range_input_is_rejected(bad: float) -> None:
    with pytest.raises(ValueError, match="tool_efficiency"):
        peerread_composite({**FULL, "tool_efficiency": bad}, PROFILE)


maybe_unit = st.none() | st.floats(min_value=0, max_value=1)


@given(st.fixed_dictionaries(dict.fromkeys(FULL, maybe_unit)))
def test_composite_lies_between_the_present_inputs(inputs: dict[str, float | None]) -> None:
    score = peerread_composite(inputs, PROFILE)
    present = [v for v in inputs.values() if v is not None]
    if not present:
        assert score.composite is None
        return
    assert score.composite is not None
    assert min(present) - 1e-9 <= score.composite <= max(present) + 1e-9
    assert 0.0 <= score.composite <= 1.0
    assert len(score.used) == len(present)
    assert set(score.missing) == {k for k, v in inputs.items() if v is None}
    assert score.recommendation == recommendation(score.composite, PROFILE)[0]


@given(st.floats(0, 1), st.floats(0, 1))
def test_recommendation_is_monotone(a: float, b: float) -> None:
    low, high = sorted((a, b))
    assert recommendation(low, PROFILE)[1] <= recommendation(high, PROFILE)[1]


def test_score_serialises() -> None:
    data = peerread_composite({**FULL, "planning_rationality": None}, PROFILE).model_dump(
        mode="json"
    )
    assert json.loads(json.dumps(data, allow_nan=False))["missing"] == ["planning_rationality"]
    assert data["recommendation"] == "weak_accept"  # 0.68


def test_an_unknown_input_name_is_an_error_naming_it() -> None:
    # the judge's rubric is `planning_rationality`; the old composite name was silently dropped
    with pytest.raises(ValueError, match="'planning_rational'"):
        peerread_composite({**FULL, "planning_rational": 0.5}, PROFILE)


def test_the_profile_rejects_weights_for_inputs_that_do_not_exist() -> None:
    with pytest.raises(ValueError, match="planning_rational"):
        PeerReadProfile(weights={"time_taken": 1.0, "planning_rational": 1.0})


def test_not_reported_inputs_are_named_with_the_score() -> None:
    score = peerread_composite({**FULL, "time_taken": 0.0}, PROFILE, not_reported=("time_taken",))
    assert score.not_reported == ("time_taken",)
    assert score.composite == pytest.approx((0.8 + 0.7 + 0.6 + 0.5 + 0.4) / 6)
