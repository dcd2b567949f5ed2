"""Spec 004 per-scenario score, pass and weight."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalq.core.profile import SuiteProfile
from evalq.core.schemas import ScenarioResult
from evalq.scoring.suite.scenario import scenario_passed, scenario_score, scenario_weight

PROFILE = SuiteProfile()


def scenario(**kwargs: object) -> ScenarioResult:
    return ScenarioResult.model_validate({"id": "S-1", **kwargs})


def test_score_is_the_fraction_of_expected_behaviours_observed() -> None:
    s = scenario(expected_behaviors=["a", "b", "c", "d"], observed_behaviors=["a", "c", "x"])
    assert scenario_score(s) == 0.5  # a and c of four; x was not expected and does not count
    assert not scenario_passed(s, PROFILE)  # default threshold 1.0
    assert scenario_passed(s, SuiteProfile(scenario_pass_threshold=0.5))


def test_duplicates_count_once() -> None:
    s = scenario(expected_behaviors=["a", "a", "b"], observed_behaviors=["a", "a"])
    assert scenario_score(s) == 0.5  # distinct: {a} of {a, b}


def test_any_violation_scores_zero() -> None:
    s = scenario(
        expected_behaviors=["a"], observed_behaviors=["a"], must_not_violations=["leak_secret"]
    )
    assert scenario_score(s) == 0.0
    assert not scenario_passed(s, SuiteProfile(scenario_pass_threshold=0.1))


def test_no_expected_behaviour_scores_one_without_violation() -> None:
    assert scenario_score(scenario()) == 1.0
    assert scenario_score(scenario(must_not_violations=["x"])) == 0.0


@pytest.mark.parametrize(
    ("category", "capability", "weight"),
    [
        ("adversarial", "core_function", 4.0),  # 2.0 x 2.0
        ("regression", "convenience_feature", 0.75),  # 1.5 x 0.5
        ("happy_path", None, 1.0),  # no capability: factor 1
        ("edge_case", "core_function", 2.0),  # 1.0 x 2.0
    ],
)
def test_weight_is_category_times_capability(
    category: str, capability: str | None, weight: float
) -> None:
    s = scenario(category=category, capability=capability)
    assert scenario_weight(s, PROFILE) == weight


def test_unweighted_category_counts_as_one() -> None:
    profile = SuiteProfile(category_weights={"adversarial": 3.0}, capability_weights={})
    assert (
        scenario_weight(scenario(category="edge_case", capability="core_function"), profile) == 1.0
    )


names = st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), max_size=6)


@given(names, names, st.lists(st.sampled_from(["x", "y"]), min_size=1, max_size=3))
def test_a_violation_always_scores_zero(
    expected: list[str], observed: list[str], violations: list[str]
) -> None:
    s = scenario(
        expected_behaviors=expected, observed_behaviors=observed, must_not_violations=violations
    )
    assert scenario_score(s) == 0.0


@given(names, names)
def test_score_is_a_fraction_and_grows_with_observations(
    expected: list[str], observed: list[str]
) -> None:
    s = scenario(expected_behaviors=expected, observed_behaviors=observed)
    more = scenario(expected_behaviors=expected, observed_behaviors=observed + expected[:1])
    assert 0.0 <= scenario_score(s) <= scenario_score(more) <= 1.0
