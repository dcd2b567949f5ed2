"""The final score of a bootstrap resample of a run's scenarios (repeats allowed)."""

from __future__ import annotations

import pytest

from evalq.core.profile import SuiteProfile
from evalq.core.schemas import ScenarioResult
from evalq.scoring.suite import evaluate_suite, suite_metrics
from evalq.scoring.suite.aggregate import ScenarioFacts, aggregate, scenario_facts
from evalq.scoring.suite.resample import resampled_final_score

PROFILE = SuiteProfile()


def scenario(sid: str, observed: list[str], **kwargs: object) -> ScenarioResult:
    return ScenarioResult.model_validate(
        {"id": sid, "expected_behaviors": ["a", "b"], "observed_behaviors": observed, **kwargs}
    )


GOOD = scenario("H1", ["a", "b"], latency_ms=100.0, tokens_used=50)
HALF = scenario("H2", ["a"], latency_ms=900.0, correct_outputs=1, total_outputs=2)
ATTACK = scenario("A1", ["a", "b"], category="adversarial", must_not_violations=["leak"])


def facts(scenarios: list[ScenarioResult]) -> list[ScenarioFacts]:
    return [scenario_facts(s, PROFILE) for s in scenarios]


def test_the_whole_sample_scores_as_the_suite_scorer_does() -> None:
    scenarios = [GOOD, HALF, ATTACK]
    stored = evaluate_suite(scenarios, [], PROFILE).final_score
    assert resampled_final_score(facts(scenarios), PROFILE) == stored
    whole = suite_metrics(scenarios, PROFILE)
    assert aggregate(facts(scenarios), PROFILE) == whole.__class__(
        **{**whole.__dict__, "scenario_scores": {}}
    )  # the same metrics, only the id-keyed scores left to suite_metrics


def test_a_repeated_scenario_counts_once_per_draw() -> None:
    twice = resampled_final_score(facts([GOOD, GOOD, HALF]), PROFILE)
    copy = GOOD.model_copy(update={"id": "H3"})
    assert twice == evaluate_suite([GOOD, copy, HALF], [], PROFILE).final_score
    assert twice != resampled_final_score(facts([GOOD, HALF]), PROFILE)
    metrics = aggregate(facts([GOOD, GOOD, HALF]), PROFILE)
    assert (metrics.scenario_count, metrics.passed_count) == (3, 2)
    assert metrics.pass_rate == pytest.approx(2 / 3)
