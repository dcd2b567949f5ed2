"""The final score of a bootstrap resample of a run's scenarios (repeats allowed)."""

from __future__ import annotations

import pytest

from evalq.core.profile import SuiteProfile
from evalq.core.schemas import ScenarioResult
from evalq.scoring.suite import evaluate_suite
from evalq.scoring.suite.resample import distinct, resampled_final_score

PROFILE = SuiteProfile()


def scenario(sid: str, observed: list[str], **kwargs: object) -> ScenarioResult:
    return ScenarioResult.model_validate(
        {"id": sid, "expected_behaviors": ["a", "b"], "observed_behaviors": observed, **kwargs}
    )


GOOD = scenario("H1", ["a", "b"], latency_ms=100.0)
HALF = scenario("H2", ["a"], latency_ms=900.0)
ATTACK = scenario("A1", ["a", "b"], category="adversarial", must_not_violations=["leak"])


def test_repeats_are_renamed_and_the_originals_kept() -> None:
    renamed = distinct([GOOD, GOOD, HALF, GOOD])
    assert [s.id for s in renamed] == ["H1", "H1#2", "H2", "H1#3"]
    assert renamed[0] is GOOD and renamed[1].observed_behaviors == GOOD.observed_behaviors


def test_the_whole_sample_scores_as_the_suite_scorer_does() -> None:
    scenarios = [GOOD, HALF, ATTACK]
    stored = evaluate_suite(scenarios, [], PROFILE).final_score
    assert resampled_final_score(scenarios, PROFILE) == stored


def test_a_repeated_scenario_counts_once_per_draw() -> None:
    twice = resampled_final_score([GOOD, GOOD, HALF], PROFILE)
    copy = GOOD.model_copy(update={"id": "H3"})
    assert twice == evaluate_suite([GOOD, copy, HALF], [], PROFILE).final_score
    assert twice == pytest.approx(resampled_final_score([GOOD, copy, HALF], PROFILE))
    assert twice != resampled_final_score([GOOD, HALF], PROFILE)
