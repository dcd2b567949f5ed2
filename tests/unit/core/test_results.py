"""The stored judge result: a single judge's JSON has no panel keys; a panel's round-trips.
A cost of pass is infinite in Python and "inf" in JSON."""

from __future__ import annotations

import json
import math

from evalq.core.results import (
    Agreement,
    CriterionScore,
    JudgeResult,
    PanelMember,
    RubricResult,
    ScyllaScores,
    TierOutcome,
)

RUBRIC = RubricResult(
    rubric="constructiveness",
    status="ok",
    score=0.5,
    criteria={"actionable_feedback": CriterionScore(score=3, normalised=0.5, rationale="r")},
    attempts=1,
)


def single() -> JudgeResult:
    return JudgeResult(model="m", scores={"constructiveness": 0.5}, failed=False, rubrics=(RUBRIC,))


def test_a_single_judge_stores_no_panel_or_agreement_key() -> None:
    metrics, _ = TierOutcome(tier="judge", status="ok", result=single()).stored()
    assert metrics is not None
    assert "panel" not in metrics and "agreement" not in metrics
    assert sorted(metrics) == sorted(
        [
            *("model", "scores", "failed", "errors", "rubrics", "cost_usd", "priced_by"),
            *("budget_usd", "redis_error", "attempts", "transport_retries", "rate_limited"),
            *("validation_retries", "cache_hits", "input_tokens", "output_tokens", "skipped"),
            "truncated",
        ]
    )
    back = TierOutcome.from_stored("judge", "ok", metrics, None).judge
    assert back == single() and back is not None and back.panel == () and back.agreement is None


def test_a_panel_result_round_trips_through_the_stored_json() -> None:
    result = single().model_copy(
        update={
            "panel": (
                PanelMember(model="a", rubrics=(RUBRIC,), cost_usd=0.001),
                PanelMember(model="b", rubrics=(RUBRIC,)),
            ),
            "agreement": Agreement(alpha=0.25, units=3, members=2),
        }
    )
    metrics, _ = TierOutcome(tier="judge", status="ok", result=result).stored()
    assert metrics is not None
    assert metrics["agreement"] == {"alpha": 0.25, "units": 3, "members": 2}
    assert [m["model"] for m in metrics["panel"]] == ["a", "b"]
    assert metrics["panel"][0]["rubrics"][0]["criteria"]["actionable_feedback"]["score"] == 3
    assert TierOutcome.from_stored("judge", "ok", metrics, None).judge == result


def test_an_undefined_alpha_is_stored_as_null() -> None:
    result = single().model_copy(update={"agreement": Agreement(alpha=None, units=0, members=1)})
    assert result.model_dump(mode="json")["agreement"] == {"alpha": None, "units": 0, "members": 1}


def test_cost_of_pass_owns_its_infinite_rule() -> None:
    stored = {
        "passed": False,
        "pass_rate": 0.0,
        "impl_rate": None,
        "composite": 0.0,
        "grade": "F",
        "cost_usd": 0.2,
        "cost_of_pass": "inf",
        "duration_seconds": None,
        "variant": "T0",
        "run_index": None,
    }
    run = ScyllaScores.model_validate(stored)
    assert run.cost_of_pass == math.inf  # infinite in Python, "inf" in JSON
    assert run.model_dump(mode="json") == stored
    assert json.loads(run.model_dump_json()) == stored
    finite = ScyllaScores.model_validate(stored | {"cost_of_pass": 0.5})
    assert finite.cost_of_pass == 0.5 and finite.model_dump(mode="json")["cost_of_pass"] == 0.5
    schema = ScyllaScores.model_json_schema()["properties"]["cost_of_pass"]
    assert schema["anyOf"] == [
        {"type": "number"},
        {"const": "inf", "type": "string"},
        {"type": "null"},
    ]
