"""Spec 004 suite-level aggregation and scenario weights."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalq.core.profile import SuiteProfile
from evalq.core.schemas import ScenarioResult
from evalq.scoring.suite.aggregate import suite_metrics

PROFILE = SuiteProfile()


def scenario(sid: str, **kwargs: object) -> ScenarioResult:
    return ScenarioResult.model_validate({"id": sid, **kwargs})


def good(sid: str, **kwargs: object) -> ScenarioResult:
    return scenario(sid, expected_behaviors=["a"], observed_behaviors=["a"], **kwargs)


def bad(sid: str, **kwargs: object) -> ScenarioResult:
    return scenario(sid, expected_behaviors=["a", "b"], observed_behaviors=["a"], **kwargs)


def test_counts_rates_and_categories() -> None:
    m = suite_metrics(
        [
            good("H1"),
            bad("H2"),  # score 0.5, fails at threshold 1.0
            good("A1", category="adversarial"),
            good("A2", category="adversarial", must_not_violations=["leak"]),  # score 0
        ],
        PROFILE,
    )
    assert (m.scenario_count, m.passed_count, m.pass_rate) == (4, 2, 0.5)
    assert m.safety_rate == 0.5  # A1 of A1, A2
    assert m.behavior_coverage == pytest.approx(0.625)  # (1 + 0.5 + 1 + 0) / 4
    assert m.category_pass_rates == {"happy_path": 0.5, "adversarial": 0.5}
    assert m.scenario_scores == {"H1": 1.0, "H2": 0.5, "A1": 1.0, "A2": 0.0}


def test_weighted_pass_rate_and_coverage() -> None:
    m = suite_metrics(
        [
            good("A1", category="adversarial", capability="core_function"),  # weight 4
            bad("H1", capability="convenience_feature"),  # weight 0.5, score 0.5
            bad("E1", category="edge_case"),  # weight 1, score 0.5
        ],
        PROFILE,
    )
    assert m.weighted_pass_rate == pytest.approx(4 / 5.5)  # (4 x 1 + 0.5 x 0 + 1 x 0) / 5.5
    # (4 x 1 + 0.5 x 0.5 + 1 x 0.5) / 5.5 = 4.75 / 5.5
    assert m.weighted_coverage == pytest.approx(4.75 / 5.5)
    assert m.pass_rate == pytest.approx(1 / 3)


def test_accuracy_is_pooled_over_reporting_scenarios() -> None:
    m = suite_metrics(
        [
            good("S1", correct_outputs=9, total_outputs=10),
            good("S2", correct_outputs=0, total_outputs=5),
            good("S3"),  # reports no outputs: not counted
        ],
        PROFILE,
    )
    assert m.accuracy == pytest.approx(0.6)  # (9 + 0) / (10 + 5), not the macro 0.45


def test_precision_recall_token_efficiency_latency() -> None:
    m = suite_metrics(
        [
            good("S1", true_positives=2, false_positives=1, tokens_used=100, latency_ms=100),
            bad("S2", true_positives=1, false_negatives=3, tokens_used=400, latency_ms=7000),
            good("S3", latency_ms=200),
        ],
        PROFILE,
    )
    assert m.precision == 0.75  # 3 / (3 + 1)
    assert m.recall == 0.5  # 3 / (3 + 3)
    assert m.token_efficiency == pytest.approx(0.003)  # (1.0 + 0.5) / (100 + 400)
    assert m.latency_p95_ms == 7000.0  # nearest rank ceil(0.95 x 3) = 3
    assert m.normalized_latency == 1.0  # min(1, 7000 / 5000)


def test_coverage_leaves_out_scenarios_expecting_nothing() -> None:
    m = suite_metrics([bad("S1"), scenario("S2")], PROFILE)
    assert m.behavior_coverage == 0.5  # S2 has no expected behaviour
    assert m.pass_rate == 0.5  # but S2 still passes (score 1.0)


def test_empty_suite_has_no_rates() -> None:
    m = suite_metrics([], PROFILE)
    assert m.scenario_count == 0
    assert all(value is None for value in m.rates().values())
    assert (m.latency_p95_ms, m.normalized_latency, m.token_efficiency) == (None, None, None)
    assert m.category_pass_rates == {}


def test_no_adversarial_scenario_means_no_safety_rate() -> None:
    assert suite_metrics([good("S1")], PROFILE).safety_rate is None


def test_duplicate_ids_are_rejected() -> None:
    with pytest.raises(ValueError, match="unique"):
        suite_metrics([good("S1"), bad("S1")], PROFILE)


outcomes = st.lists(st.booleans(), max_size=12)


@given(outcomes, st.sampled_from(["happy_path", "edge_case", "adversarial", "regression"]))
def test_adding_a_passing_scenario_never_lowers_pass_rates(
    passes: list[bool], category: str
) -> None:
    scenarios = [good(f"S{i}") if p else bad(f"S{i}") for i, p in enumerate(passes)]
    before = suite_metrics(scenarios, PROFILE)
    after = suite_metrics([*scenarios, good("NEW", category=category)], PROFILE)
    assert after.pass_rate is not None
    assert before.pass_rate is None or after.pass_rate >= before.pass_rate
    assert after.weighted_pass_rate is not None
    assert (
        before.weighted_pass_rate is None
        or after.weighted_pass_rate >= before.weighted_pass_rate - 1e-12
    )
    assert (
        after.safety_rate is None
        or before.safety_rate is None
        or (after.safety_rate >= before.safety_rate)
    )


@given(outcomes)
def test_rates_are_fractions(passes: list[bool]) -> None:
    scenarios = [
        good(f"S{i}", category="adversarial") if p else bad(f"S{i}") for i, p in enumerate(passes)
    ]
    for value in suite_metrics(scenarios, PROFILE).rates().values():
        assert value is None or 0.0 <= value <= 1.0
