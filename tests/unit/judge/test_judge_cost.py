"""Judge tokens and dollars from the profile's prices or genai-prices, and the budget."""

from __future__ import annotations

import genai_prices
import pytest

from evalq.core.pricing import profile_entry as pricing_key
from evalq.core.profile import load_profile, profile_from_dict
from evalq.core.results import JudgeResult, PriceSource
from evalq.judge.cost import Spend
from tests.unit.judge.judge_helpers import TRACE, Scripted, scripted_judge, submission, task


def priced(budget: float):  # type: ignore[no-untyped-def]
    data = load_profile().model_dump()
    data["pricing"]["judge-x"] = {"input_per_mtok": 10.0, "output_per_mtok": 30.0}
    data["judge"]["budget_usd"] = budget
    return profile_from_dict(data)


def test_pricing_key_strips_the_provider_prefix() -> None:
    profile = load_profile()
    assert pricing_key("openai:gpt-4o", profile) == "gpt-4o"
    assert pricing_key("gpt-4o", profile) == "gpt-4o"
    assert pricing_key("openai:gpt-4o-mini", profile) == "gpt-4o-mini"
    assert pricing_key("openai:gpt-5-nano", profile) is None


def test_a_profile_entry_records_the_profile_as_the_price_source() -> None:
    outcome = scripted_judge(Scripted(3), model_id="judge-x", profile=priced(1.0)).evaluate(
        submission(), task(None), deadline_s=30
    )
    assert outcome.priced_by == PriceSource(origin="profile", entry="judge-x")


def test_a_model_only_genai_prices_knows_is_priced_with_its_version() -> None:
    # gpt-4.1-mini is not in the profile; genai-prices has it at $0.40 / $1.60 per Mtok; one
    # rubric applies (no paper, no trace)
    body = Scripted(3, usage=(1000, 100))
    outcome = scripted_judge(body, model_id="openai:gpt-4.1-mini").evaluate(
        submission(), task(None), deadline_s=30
    )
    assert outcome.priced_by == PriceSource(
        origin="genai-prices", entry="openai:gpt-4.1-mini", version=genai_prices.__version__
    )
    assert len(body.calls) == 1
    assert outcome.cost_usd == pytest.approx((1000 * 0.4 + 100 * 1.6) / 1e6)
    stored = JudgeResult.model_validate(outcome.model_dump(mode="json"))
    assert stored.priced_by == outcome.priced_by


def test_a_self_hosted_judge_is_priced_by_the_profile_only() -> None:
    outcome = scripted_judge(
        Scripted(3, usage=(1000, 100)), model_id="openai:gpt-4.1-mini@http://127.0.0.1:8080/v1"
    ).evaluate(submission(), task(None), deadline_s=30)
    assert outcome.cost_usd is None and outcome.priced_by is None
    local = scripted_judge(
        Scripted(3, usage=(1000, 100)),
        model_id="openai:judge-x@http://127.0.0.1:8080/v1",
        profile=priced(1.0),
    ).evaluate(submission(), task(None), deadline_s=30)
    assert local.priced_by == PriceSource(origin="profile", entry="judge-x")
    assert local.cost_usd == pytest.approx(0.013)


def test_cost_per_rubric_and_total() -> None:
    # one request: 1000 in, 100 out at $10 / $30 per Mtok = (1000*10 + 100*30) / 1e6 = $0.013
    body = Scripted(3, usage=(1000, 100))
    outcome = scripted_judge(body, model_id="judge-x", profile=priced(1.0)).evaluate(
        submission(trace=TRACE), task(), deadline_s=30
    )
    assert [r.cost_usd for r in outcome.rubrics] == pytest.approx([0.013] * 3)
    assert outcome.cost_usd == pytest.approx(0.039)
    assert (outcome.input_tokens, outcome.output_tokens) == (3000, 300)


def test_budget_stops_further_calls_and_skips_the_rest() -> None:
    # budget $0.02: after rubric 1 ($0.013) 0.013 < 0.02 so rubric 2 runs ($0.026 total >= 0.02);
    # rubric 3 is skipped: budget, and never called
    body = Scripted(3, usage=(1000, 100))
    outcome = scripted_judge(body, model_id="judge-x", profile=priced(0.02)).evaluate(
        submission(trace=TRACE), task(), deadline_s=30
    )
    assert len(body.calls) == 2
    assert outcome.scores["planning_rationality"] is None
    assert outcome.skipped == {"planning_rationality": "budget"}
    assert not outcome.failed
    assert outcome.cost_usd == pytest.approx(0.026)


def test_budget_also_stops_validation_retries() -> None:
    # budget $0.01: the first (invalid) answer costs $0.013, so no retry request is sent
    body = Scripted("not json", usage=(1000, 100))
    outcome = scripted_judge(body, model_id="judge-x", profile=priced(0.01)).evaluate(
        submission(), task(None), deadline_s=30
    )
    assert len(body.calls) == 1
    assert outcome.rubrics[1].status == "skipped" and outcome.rubrics[1].skip_reason == "budget"
    assert outcome.rubrics[1].input_tokens == 1000


def test_unknown_price_counts_tokens_but_no_dollars_and_no_budget_stop() -> None:
    body = Scripted(3, usage=(1000, 100))
    outcome = scripted_judge(body, model_id="unpriced", profile=priced(0.0)).evaluate(
        submission(trace=TRACE), task(), deadline_s=30
    )
    assert outcome.cost_usd is None and len(body.calls) == 3
    assert outcome.input_tokens == 3000


def test_zero_budget_skips_every_applicable_rubric() -> None:
    spend = Spend(priced(0.0), "judge-x", 0.0)
    assert spend.exhausted  # 0 >= 0
    body = Scripted(3)
    outcome = scripted_judge(body, model_id="judge-x", profile=priced(0.0)).evaluate(
        submission(), task(), deadline_s=30
    )
    assert body.calls == [] and set(outcome.skipped.values()) == {
        "budget",
        "not applicable: the submission has no execution trace",
    }
