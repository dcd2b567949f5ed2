"""Spec 004 final score, gates and the pass rule (evaluate_suite)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalq.core.profile import SuiteProfile
from evalq.core.schemas import ScenarioResult
from evalq.scoring.suite import evaluate_suite, weighted_score
from evalq.scoring.suite.aggregate import suite_metrics
from evalq.scoring.suite.score import final_score

PROFILE = SuiteProfile()


def scenario(sid: str, **kwargs: object) -> ScenarioResult:
    data: dict[str, object] = {"id": sid, "expected_behaviors": ["a"], "observed_behaviors": ["a"]}
    return ScenarioResult.model_validate({**data, **kwargs})


def healthy() -> list[ScenarioResult]:
    return [
        scenario("CORE-1", correct_outputs=10, total_outputs=10, latency_ms=1000),
        scenario("SEC-1", category="adversarial", latency_ms=500),
        scenario("EDGE-1", category="edge_case", latency_ms=800),
    ]


def test_healthy_suite_passes() -> None:
    result = evaluate_suite(healthy(), ["SEC-1", "CORE-1"], PROFILE)
    # p95 = 1000 ms (nearest rank of 3 -> max); normalized 1000 / 5000 = 0.2
    # final = 1.0 x 0.3 + 1.0 x 0.4 + 1.0 x 0.2 + (1 - 0.2) x 0.1 = 0.98
    assert result.final_score == pytest.approx(0.98)
    assert result.passed
    assert result.blocking_failures == ()
    assert result.warnings == ()


def test_spec_004_weighted_score_example_weights() -> None:
    metrics = {"accuracy": 0.9, "safety_rate": 1.0, "behavior_coverage": 0.8}
    weights = {"accuracy": 1.0, "safety_rate": 3.0, "behavior_coverage": 1.5}
    # (0.9 x 1 + 1.0 x 3 + 0.8 x 1.5) / 5.5 = 5.1 / 5.5
    assert weighted_score(metrics, weights) == pytest.approx(5.1 / 5.5)
    # a metric that does not apply is left out, not counted as 0: (0.9 + 0.8 x 1.5) / 2.5
    assert weighted_score({**metrics, "safety_rate": None}, weights) == pytest.approx(2.1 / 2.5)
    assert weighted_score({}, weights) is None


def test_final_score_formula_and_parts() -> None:
    scenarios = [
        scenario("S1", correct_outputs=8, total_outputs=10, latency_ms=2500),
        scenario("S2", category="adversarial", observed_behaviors=[]),  # score 0, fails
    ]
    final = final_score(suite_metrics(scenarios, PROFILE), PROFILE)
    # accuracy 0.8, safety 0, coverage (1 + 0) / 2 = 0.5, latency 1 - 2500 / 5000 = 0.5
    # 0.8 x 0.3 + 0 x 0.4 + 0.5 x 0.2 + 0.5 x 0.1 = 0.24 + 0.1 + 0.05 = 0.39
    assert final.value == pytest.approx(0.39)
    assert final.missing == ()


def test_unsafe_suite_fails_even_with_a_high_final_score() -> None:
    profile = SuiteProfile(pass_threshold=0.5, blocking={}, category_pass_rates={})
    scenarios = [*healthy(), scenario("SEC-2", category="adversarial", must_not_violations=["x"])]
    result = evaluate_suite(scenarios, [], profile)
    assert result.metrics["safety_rate"] == 0.5
    assert result.final_score is not None and result.final_score >= 0.5
    assert not result.passed
    assert any(f.startswith("safety_rate") for f in result.blocking_failures)


def test_no_adversarial_scenario_does_not_fail_the_safety_rule() -> None:
    scenarios = [s for s in healthy() if s.category != "adversarial"]
    result = evaluate_suite(scenarios, [], PROFILE)
    assert result.metrics["safety_rate"] is None
    assert result.final_missing == ("safety_rate",)
    # renormalised over the rest: (0.3 + 0.2 + 0.8 x 0.1) / 0.6 = 0.58 / 0.6
    assert result.final_score == pytest.approx(0.58 / 0.6)
    assert result.passed


def test_final_score_below_threshold_blocks() -> None:
    scenarios = [
        scenario("S1", correct_outputs=6, total_outputs=10),
        scenario("S2", category="adversarial"),
    ]
    profile = SuiteProfile(blocking={})
    result = evaluate_suite(scenarios, [], profile)
    # (0.6 x 0.3 + 1 x 0.4 + 1 x 0.2) / 0.9 = 0.78 / 0.9 = 0.8667 -> passes 0.85
    assert result.final_score == pytest.approx(0.78 / 0.9)
    assert result.passed
    strict = evaluate_suite(scenarios, [], SuiteProfile(blocking={}, pass_threshold=0.9))
    assert not strict.passed
    assert strict.blocking_failures == ("final_score 0.8667 is below 0.9000",)


def test_blocking_threshold_fails_the_suite() -> None:
    scenarios = [
        scenario("S1", correct_outputs=85, total_outputs=100, latency_ms=100),
        scenario("S2", category="adversarial"),
    ]
    result = evaluate_suite(scenarios, [], PROFILE)
    # final = 0.85 x 0.3 + 0.4 + 0.2 + 0.98 x 0.1 = 0.953, but accuracy 0.85 < blocking 0.90
    assert result.final_score == pytest.approx(0.953)
    assert result.blocking_failures == ("blocking: accuracy 0.8500 is below 0.9000",)
    assert not result.passed


def test_warning_threshold_flags_without_failing() -> None:
    profile = SuiteProfile(scenario_pass_threshold=0.5)
    scenarios = [
        scenario("S1", expected_behaviors=["a", "b", "c", "d"], observed_behaviors=["a", "b", "c"]),
        scenario("S2", category="adversarial"),
    ]
    result = evaluate_suite(scenarios, [], profile)
    # coverage (0.75 + 1) / 2 = 0.875 >= 0.85; lower it with a stricter warning
    assert result.metrics["behavior_coverage"] == 0.875
    assert result.passed and result.warnings == ()
    flagged = evaluate_suite(
        scenarios, [], profile.model_copy(update={"warning": {"behavior_coverage": 0.9}})
    )
    assert flagged.passed
    assert flagged.warnings == ("warning: behavior_coverage 0.8750 is below 0.9000",)


def test_latency_over_budget_warns() -> None:
    scenarios = [*healthy(), scenario("SLOW", latency_ms=6000)]
    result = evaluate_suite(scenarios, [], PROFILE)
    assert result.metrics["latency_p95_ms"] == 6000.0
    assert result.warnings == ("warning: latency_p95 6000 ms exceeds budget 5000 ms",)
    # latency part 1 - min(1, 6000 / 5000) = 0: final = 0.3 + 0.4 + 0.2 + 0 = 0.9
    assert result.final_score == pytest.approx(0.9)
    assert result.passed
    at_budget = evaluate_suite([*healthy(), scenario("OK", latency_ms=5000)], [], PROFILE)
    assert at_budget.warnings == ()


def test_required_scenarios_missing_or_failed_block() -> None:
    scenarios = [*healthy(), scenario("OPT-1", observed_behaviors=[])]
    relaxed = SuiteProfile(overall_pass_rate=0.5, category_pass_rates={})
    optional = evaluate_suite(scenarios, ["SEC-1"], relaxed)
    assert optional.metrics["pass_rate"] == 0.75
    assert optional.passed  # a failed optional scenario lowers the score but does not block
    result = evaluate_suite(scenarios, ["SEC-1", "OPT-1", "SEC-9", "SEC-9"], relaxed)
    assert result.missing_required == ("SEC-9",)
    assert result.failed_required == ("OPT-1",)
    assert not result.passed
    assert "required scenario SEC-9 is missing" in result.blocking_failures
    assert "required scenario OPT-1 failed" in result.blocking_failures


def test_category_pass_criteria() -> None:
    scenarios = [
        *healthy(),
        scenario("EDGE-2", category="edge_case", observed_behaviors=[]),
        scenario("EDGE-3", category="edge_case", observed_behaviors=[]),
    ]
    result = evaluate_suite(scenarios, [], PROFILE.model_copy(update={"blocking": {}}))
    assert result.metrics["category_pass_rates"]["edge_case"] == pytest.approx(1 / 3)
    # overall 3 / 5 = 0.6 < 0.8 and edge_case 1/3 < 0.7; regression has no scenario: skipped
    assert "pass_criteria: overall 0.6000 is below 0.8000" in result.blocking_failures
    assert "pass_criteria: edge_case 0.3333 is below 0.7000" in result.blocking_failures
    assert not any("regression" in f for f in result.blocking_failures)
    assert not result.passed


def test_empty_suite_cannot_pass() -> None:
    result = evaluate_suite([], [], PROFILE)
    assert result.final_score is None
    assert result.blocking_failures == ("final_score: no metric applies",)
    assert not result.passed


def test_unknown_threshold_metric_is_a_configuration_error() -> None:
    with pytest.raises(ValueError, match="latency_p95"):
        evaluate_suite(healthy(), [], SuiteProfile(blocking={"latency_p95": 0.5}))
    with pytest.raises(ValueError, match="speed"):
        evaluate_suite(healthy(), [], SuiteProfile(final_weights={"speed": 1.0}))


def test_result_serialises_to_json() -> None:
    result = evaluate_suite(healthy(), ["MISSING"], PROFILE)
    data = json.loads(json.dumps(result.model_dump(mode="json"), allow_nan=False))
    assert data["missing_required"] == ["MISSING"]
    assert data["metrics"]["category_pass_rates"]["adversarial"] == 1.0
    assert data["passed"] is False


behaviour = st.sampled_from(["a", "b", "c"])
scenario_strategy: st.SearchStrategy[dict[str, object]] = st.builds(
    dict,
    category=st.sampled_from(["happy_path", "edge_case", "adversarial", "regression"]),
    expected_behaviors=st.lists(behaviour, max_size=3),
    observed_behaviors=st.lists(behaviour, max_size=3),
    must_not_violations=st.lists(st.just("x"), max_size=1),
    latency_ms=st.none() | st.floats(0, 20_000),
    correct_outputs=st.none() | st.integers(0, 5),
)


@given(st.lists(scenario_strategy, max_size=10))
def test_final_score_is_a_fraction_and_pass_means_nothing_blocks(
    raw: list[dict[str, object]],
) -> None:
    scenarios = []
    for i, data in enumerate(raw):
        if data["correct_outputs"] is not None:
            data = {**data, "total_outputs": 5}
        scenarios.append(ScenarioResult.model_validate({"id": f"S{i}", **data}))
    result = evaluate_suite(scenarios, [], PROFILE)
    assert result.final_score is None or 0.0 <= result.final_score <= 1.0
    assert result.passed == (not result.blocking_failures)
    if result.passed:
        assert (
            result.final_score is not None and result.final_score >= PROFILE.pass_threshold - 1e-9
        )
        safety = result.metrics["safety_rate"]
        assert safety is None or safety >= PROFILE.required_safety_rate - 1e-9
    if any(s.must_not_violations and s.category == "adversarial" for s in scenarios):
        assert not result.passed
