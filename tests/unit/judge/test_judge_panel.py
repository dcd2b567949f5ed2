"""A panel of FunctionModel judges: median rubric scores, agreement, failures, cost and budget.

Without a paper or a trace only the constructiveness rubric applies (actionable_feedback,
balanced_critique, improvement_guidance, equal weights), so each judge scores three units.
"""

from __future__ import annotations

import pytest
from pydantic import SecretStr
from pydantic_ai.exceptions import ModelHTTPError

from evalq.core.profile import Profile, load_profile, profile_from_dict
from evalq.core.results import Agreement, JudgeResult
from evalq.core.settings import Settings
from evalq.judge import Judge, JudgePanel, build_judge
from evalq.judge.provider import JudgeModelConfig, panel_configs
from tests.unit.judge.judge_helpers import TRACE, Scripted, scripted_judge, submission, task

SPREAD = {"actionable_feedback": 5, "balanced_critique": 3, "improvement_guidance": 1}


def panel(*bodies: Scripted, profile: Profile | None = None) -> JudgePanel:
    profile = profile or load_profile()
    return JudgePanel(
        [
            scripted_judge(body, model_id=f"judge-{name}", profile=profile)
            for name, body in zip("abc", bodies, strict=False)
        ]
    )


def judged(*bodies: Scripted) -> JudgeResult:
    return panel(*bodies).evaluate(submission(), task(None), deadline_s=30)


def member_scores(result: JudgeResult) -> list[dict[str, int]]:
    return [
        {n: c.score for n, c in m.rubrics[1].criteria.items()}  # rubric 1: constructiveness
        for m in result.panel
    ]


def test_three_agreeing_judges_have_alpha_one_and_their_own_score() -> None:
    bodies = Scripted(SPREAD), Scripted(SPREAD), Scripted(SPREAD)
    result = judged(*bodies)
    assert result.scores["constructiveness"] == pytest.approx(0.5)  # (1 + 0.5 + 0) / 3
    assert result.agreement == Agreement(alpha=1.0, units=3, members=3)
    assert [m.model for m in result.panel] == ["judge-a", "judge-b", "judge-c"]
    assert member_scores(result) == [SPREAD] * 3
    assert all(len(b.calls) == 1 for b in bodies)  # every member scored the rubric once
    assert result.model == "judge-a" and not result.failed
    assert result.attempts == 3 and result.rubric("constructiveness").attempts == 3
    assert result.rubric("constructiveness").criteria == {}  # each member's are in panel


def test_a_dissenting_judge_lowers_alpha_to_the_hand_computed_value() -> None:
    # docs/statistics.md's worked example; alpha by hand in test_judge_agreement.py
    result = judged(Scripted(SPREAD), Scripted(SPREAD), Scripted(1))
    assert result.agreement is not None and result.agreement.alpha is not None
    assert result.agreement.alpha == pytest.approx(101 / 441)  # 0.229, down from 1.0
    assert (result.agreement.units, result.agreement.members) == (3, 3)
    assert result.scores["constructiveness"] == pytest.approx(0.5)  # median of 0.5, 0.5, 0


def test_the_rubric_score_is_the_median_not_the_mean() -> None:
    result = judged(Scripted(5), Scripted(4), Scripted(1))  # normalised 1.0, 0.75, 0.0
    assert result.scores["constructiveness"] == pytest.approx(0.75)  # the mean would be 0.583
    assert result.agreement is not None
    assert result.agreement.alpha == pytest.approx(-1 / 3)  # systematic disagreement


def test_a_failing_member_is_recorded_and_left_out_of_the_median() -> None:
    broken = Scripted("not json")  # invalid on every try: output retries run out
    result = judged(Scripted(5), Scripted(4), broken)
    assert len(broken.calls) == 3  # the first answer and two output retries
    assert result.scores["constructiveness"] == pytest.approx(0.875)  # median of 1.0 and 0.75
    assert not result.failed and result.errors == ()
    failed = result.panel[2].rubrics[1]
    assert failed.status == "failed" and failed.error is not None
    assert failed.error.kind == "invalid_output" and failed.criteria == {}
    # judge-a 5, 5, 5 and judge-b 4, 4, 4: o45 = o54 = 3, n4 = n5 = 3, d45 = 3^2:
    # D_o = 2*3*9/6 = 9, D_e = 2*3*3*9/30 = 5.4, alpha = 1 - 9/5.4
    assert result.agreement is not None
    assert result.agreement.alpha == pytest.approx(-2 / 3)
    assert (result.agreement.units, result.agreement.members) == (3, 2)


def test_a_member_whose_http_calls_fail_is_recorded_with_its_error() -> None:
    refused = Scripted(ModelHTTPError(status_code=401, model_name="x", body="no key"))
    result = judged(Scripted(SPREAD), refused, Scripted(SPREAD))
    assert result.panel[1].rubrics[1].error is not None
    assert result.panel[1].rubrics[1].error.kind == "permanent"
    assert result.scores["constructiveness"] == pytest.approx(0.5)
    assert result.agreement == Agreement(alpha=1.0, units=3, members=2)


def test_when_every_member_fails_the_rubric_fails_as_for_one_judge() -> None:
    error = ModelHTTPError(status_code=400, model_name="x", body="bad")
    result = judged(Scripted(error), Scripted(error), Scripted(error))
    assert result.failed and result.scores["constructiveness"] is None
    assert [e.rubric for e in result.errors] == ["constructiveness"]
    assert result.errors[0].kind == "permanent"
    assert result.rubric("constructiveness").status == "failed"
    assert result.agreement == Agreement(alpha=None, units=0, members=0)


def test_identical_scores_everywhere_leave_alpha_undefined() -> None:
    result = judged(Scripted(4), Scripted(4), Scripted(4))
    assert result.scores["constructiveness"] == pytest.approx(0.75)
    assert result.agreement == Agreement(alpha=None, units=3, members=3)  # nothing varies


def test_rubrics_that_do_not_apply_are_skipped_for_the_panel_as_for_one_judge() -> None:
    alone = scripted_judge(Scripted(3)).evaluate(submission(), task(None), deadline_s=30)
    result = judged(Scripted(3), Scripted(3))
    assert result.skipped == alone.skipped
    assert set(result.skipped) == {"technical_accuracy", "planning_rationality"}
    assert result.scores == alone.scores


def priced(budget: float) -> Profile:
    data = load_profile().model_dump()
    for name in ("judge-a", "judge-b"):
        data["pricing"][name] = {"input_per_mtok": 10.0, "output_per_mtok": 30.0}
    data["judge"]["budget_usd"] = budget
    return profile_from_dict(data)


def test_cost_is_summed_over_members() -> None:
    # one request each: 1000 in, 100 out at $10 / $30 per Mtok = $0.013 per member
    body_a, body_b = Scripted(3, usage=(1000, 100)), Scripted(3, usage=(1000, 100))
    result = panel(body_a, body_b, profile=priced(1.0)).evaluate(
        submission(), task(None), deadline_s=30
    )
    assert result.cost_usd == pytest.approx(0.026)
    assert result.rubric("constructiveness").cost_usd == pytest.approx(0.026)
    assert [m.cost_usd for m in result.panel] == pytest.approx([0.013, 0.013])
    assert result.priced_by is None and result.panel[0].priced_by is not None
    assert result.budget_usd == 1.0


def test_each_member_spends_its_share_of_the_budget() -> None:
    # budget $0.02 for two members: $0.01 each; each member's first rubric costs $0.013, so each
    # sends one request and skips the other two rubrics for budget.
    body_a, body_b = Scripted(3, usage=(1000, 100)), Scripted(3, usage=(1000, 100))
    result = panel(body_a, body_b, profile=priced(0.02)).evaluate(
        submission(trace=TRACE), task(), deadline_s=30
    )
    assert (len(body_a.calls), len(body_b.calls)) == (1, 1)
    assert result.skipped == {"constructiveness": "budget", "planning_rationality": "budget"}
    assert result.scores["technical_accuracy"] == pytest.approx(0.5)
    assert result.cost_usd == pytest.approx(0.026)
    assert [m.rubrics[0].status for m in result.panel] == ["ok", "ok"]


def test_an_unpriced_member_leaves_the_total_cost_unknown() -> None:
    data = load_profile().model_dump()
    data["pricing"]["judge-a"] = {"input_per_mtok": 10.0, "output_per_mtok": 30.0}
    result = panel(Scripted(3, usage=(1000, 100)), Scripted(3), profile=profile_from_dict(data))
    outcome = result.evaluate(submission(), task(None), deadline_s=30)
    assert outcome.cost_usd is None
    assert [m.cost_usd for m in outcome.panel] == [pytest.approx(0.013), None]


# -- building the panel ----------------------------------------------------------------------


def with_panel(*models: str) -> Profile:
    data = load_profile().model_dump()
    data["judge"]["panel"] = list(models)
    return profile_from_dict(data)


def test_a_panel_of_one_is_the_judge_itself_with_no_panel_in_its_result() -> None:
    settings = Settings(judge_model="openai:gpt-4o-mini")
    for profile in (load_profile(), with_panel("openai:gpt-4o-mini")):
        judge = build_judge(settings, profile, redis=None)
        assert isinstance(judge, Judge) and judge.model_id == "openai:gpt-4o-mini"
    result = scripted_judge(Scripted(SPREAD)).evaluate(submission(), task(None), deadline_s=30)
    assert result.panel == () and result.agreement is None
    stored = result.model_dump(mode="json")
    assert "panel" not in stored and "agreement" not in stored


def test_the_panel_is_the_judge_model_then_the_profiles_models_without_duplicates() -> None:
    key = SecretStr("sk-openai")
    settings = Settings(judge_model="openai:gpt-4o-mini", judge_api_key=key)
    profile = with_panel("anthropic:claude-haiku-4-5", "openai-chat:gpt-4o", "openai:gpt-4o-mini")
    assert panel_configs(settings, profile) == [
        JudgeModelConfig("openai:gpt-4o-mini", None, key),
        JudgeModelConfig("anthropic:claude-haiku-4-5", None, None),  # its own provider's key
        JudgeModelConfig("openai-chat:gpt-4o", None, key),
    ]
    judge = build_judge(settings, profile, redis=None)
    assert isinstance(judge, JudgePanel)
    assert [m.model_id for m in judge.members] == [
        "openai:gpt-4o-mini",
        "anthropic:claude-haiku-4-5",
        "openai-chat:gpt-4o",
    ]


def test_on_a_server_of_ones_own_every_member_is_a_model_of_that_server() -> None:
    key = SecretStr("k")
    url = "http://127.0.0.1:9/v1"
    settings = Settings(judge_model="openai:qwen", judge_base_url=url, judge_api_key=key)
    configs = panel_configs(settings, with_panel("openai:gemma3", "llama"))
    assert configs == [
        JudgeModelConfig("openai:qwen", url, key),
        JudgeModelConfig("openai:gemma3", url, key),
        JudgeModelConfig("llama", url, key),
    ]
    assert [c.served_name for c in configs] == ["qwen", "gemma3", "llama"]


def test_no_judge_model_means_no_panel() -> None:
    assert panel_configs(Settings(judge_model=None), with_panel("openai:gpt-4o")) == []
    assert build_judge(Settings(judge_model=None), with_panel("openai:gpt-4o"), redis=None) is None


def test_a_panel_needs_two_judges() -> None:
    with pytest.raises(ValueError, match="two or more"):
        JudgePanel([scripted_judge(Scripted(3))])
