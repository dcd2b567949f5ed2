"""A judge cascade of FunctionModel levels with scripted answers: who decides, how sure, what it
cost, the audit share, failures escalating or recorded (never a 0), and how build_judge builds it.

Without a paper or a trace only constructiveness applies, so each sample answers one rubric;
a sample answering s for every criterion scores step s."""

from __future__ import annotations

import json
from typing import Any

from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelResponse, TextPart

from evalq.core.profile import CascadeProfile, load_profile, profile_from_dict
from evalq.core.settings import Settings
from evalq.judge import JudgeCascade, build_judge
from evalq.judge.cascade import is_audited
from tests.unit.judge.judge_helpers import (
    Scripted,
    scripted_judge,
    submission,
    task,
    verdict_json,
)

BROKEN = ModelHTTPError(400, "m", {"error": "bad request"})


def cascade(
    cheap: list[Any], top: list[Any], **section: Any
) -> tuple[JudgeCascade, list[Scripted], list[Scripted]]:
    """Two levels (cheap, top), one scripted body per sample; thresholds 0.9 and 0.9."""
    profile = load_profile()
    spec = CascadeProfile.model_validate(
        {
            "levels": [
                {"model": "cheap", "samples": len(cheap), "threshold": 0.9},
                {"model": "top", "samples": len(top), "threshold": 0.9},
            ],
            "calibration": "cal-1",
            "audit_share": 0.0,
        }
        | section
    )
    bodies = [[Scripted(a) for a in cheap], [Scripted(a) for a in top]]
    levels = [
        [scripted_judge(body, model_id=name, profile=profile) for body in level]
        for name, level in zip(("cheap", "top"), bodies, strict=True)
    ]
    return JudgeCascade(levels, spec), bodies[0], bodies[1]


def judged(judge: JudgeCascade, sid: str = "s1") -> Any:
    return judge.evaluate(submission(id=sid), task(None), deadline_s=30)


def test_a_confident_cheap_level_decides_and_the_top_is_never_asked() -> None:
    judge, cheap, top = cascade([5, 5, 5], [1, 1, 1])
    result = judged(judge)
    assert result.cascade is not None
    assert (result.cascade.level, result.cascade.model, result.cascade.confidence) == (
        0,
        "cheap",
        1.0,
    )
    assert result.cascade.levels_asked == 1 and result.cascade.calibration == "cal-1"
    assert result.scores["constructiveness"] == 1.0 and not result.failed
    assert [len(b.calls) for b in cheap] == [1, 1, 1] and [len(b.calls) for b in top] == [0, 0, 0]


def test_an_unsure_cheap_level_escalates_and_the_cost_counts_both() -> None:
    judge, cheap, top = cascade([5, 3, 1], [4, 4, 4])
    result = judged(judge)
    assert result.cascade.level == 1 and result.cascade.model == "top"
    assert result.cascade.confidence == 1.0 and result.cascade.levels_asked == 2
    assert result.scores["constructiveness"] == 0.75  # the top level's median
    assert all(len(b.calls) == 1 for b in cheap + top)
    single = scripted_judge(Scripted(4)).evaluate(submission(), task(None), deadline_s=30)
    assert single.cost_usd is None or result.cost_usd == 6 * single.cost_usd


def test_no_level_confident_is_judge_uncertain_with_the_top_scores_kept() -> None:
    judge, _, _ = cascade([5, 3, 1], [4, 4, 2])
    result = judged(judge)
    assert result.cascade.level is None and result.cascade.threshold is None
    assert result.cascade.model == "top"
    assert abs(result.cascade.confidence - 2 / 3) < 1e-9
    assert result.scores["constructiveness"] == 0.75 and not result.failed


def test_a_failing_level_escalates_and_a_failing_top_is_recorded_never_zero() -> None:
    judge, _, _ = cascade([BROKEN, BROKEN], [3, 3])
    result = judged(judge)
    assert result.cascade.level == 1 and result.scores["constructiveness"] == 0.5
    judge, _, _ = cascade([BROKEN, BROKEN], [BROKEN, BROKEN])
    failed = judged(judge)
    assert failed.failed and failed.scores["constructiveness"] is None
    assert failed.cascade.level is None and failed.errors


def test_the_audit_share_sends_runs_to_the_top_level_too() -> None:
    judge, _, top = cascade([5, 5], [2, 2], audit_share=1.0)
    result = judged(judge)
    assert result.cascade.level == 0 and result.cascade.audited
    assert result.cascade.model == "top" and result.scores["constructiveness"] == 0.25
    assert all(len(b.calls) == 1 for b in top)
    drawn = sum(is_audited(f"run-{i}", 0.05, 7) for i in range(20_000))
    assert 850 < drawn < 1150  # ~5%
    assert is_audited("run-1", 0.05, 7) == is_audited("run-1", 0.05, 7)  # a redelivery agrees


def test_build_judge_builds_one_seeded_judge_per_sample() -> None:
    profile = profile_from_dict(
        {
            "judge": {
                "cascade": {
                    "levels": [
                        {"model": "openai:small", "samples": 3, "threshold": 0.8},
                        {"model": "openai:large", "samples": 2},
                    ],
                    "calibration": "2026-11-24 alpha 0.1 delta 0.1",
                }
            }
        }
    )
    assert profile.hash != load_profile().hash
    settings = Settings(judge_model="openai:small", judge_base_url="http://127.0.0.1:9/v1")
    judge = build_judge(settings, profile, redis=None)
    assert isinstance(judge, JudgeCascade)
    where = "@http://127.0.0.1:9/v1"  # a model on a server is named with it
    assert [[j.model_id for j in level] for level in judge.levels] == [
        ["openai:small" + where] * 3,
        ["openai:large" + where] * 2,
    ]
    assert [j.settings.get("seed") for j in judge.levels[0]] == [0, 1, 2]
    assert build_judge(Settings(), profile, redis=None) is None  # no judge model: no tier 2


def three_levels(audit_share: float) -> tuple[JudgeCascade, list[list[Scripted]]]:
    """cheap (threshold 0.9), middle (no threshold: never trusted), top (0.9); 2 samples each."""
    profile = load_profile()
    spec = CascadeProfile.model_validate(
        {
            "levels": [
                {"model": "cheap", "samples": 2, "threshold": 0.9},
                {"model": "middle", "samples": 2},
                {"model": "top", "samples": 2, "threshold": 0.9},
            ],
            "calibration": "cal-3",
            "audit_share": audit_share,
        }
    )
    bodies = [[Scripted(5), Scripted(1)], [Scripted(3), Scripted(3)], [Scripted(4), Scripted(4)]]
    levels = [
        [scripted_judge(body, model_id=name, profile=profile) for body in level]
        for name, level in zip(("cheap", "middle", "top"), bodies, strict=True)
    ]
    return JudgeCascade(levels, spec), bodies


def test_a_level_without_a_threshold_is_skipped_except_on_audited_runs() -> None:
    judge, (_, middle, top) = three_levels(audit_share=0.0)
    record = judged(judge).cascade
    assert record is not None and record.skipped == (1,)
    assert [a.level for a in record.asked] == [0, 2] and record.level == 2
    assert [len(body.calls) for body in middle] == [0, 0]  # it would only have cost
    assert [len(body.calls) for body in top] == [1, 1]
    # An audited run asks every level, the never-trusted one too: the next calibration's items.
    judge, (_, middle, _) = three_levels(audit_share=1.0)
    record = judged(judge).cascade
    assert record is not None and record.audited and record.skipped == ()
    assert [a.level for a in record.asked] == [0, 1, 2]
    assert [len(body.calls) for body in middle] == [1, 1]


class Stating:
    """A FunctionModel body answering every criterion ``score`` and stating ``probability``."""

    def __init__(self, score: int, probability: float) -> None:
        self.score, self.probability = score, probability
        self.schemas: list[dict[str, Any]] = []

    def __call__(self, messages: list[Any], info: Any) -> Any:
        output = info.model_request_parameters.output_object
        self.schemas.append(output.json_schema)
        names = [name for name in output.json_schema["properties"] if name != "probability"]
        answer = json.loads(verdict_json(names, self.score)) | {"probability": self.probability}
        return ModelResponse(parts=[TextPart(json.dumps(answer))])


def test_a_stated_probability_is_the_levels_confidence() -> None:
    profile = load_profile()
    spec = CascadeProfile.model_validate(
        {
            "levels": [
                {"model": "cheap", "samples": 1, "threshold": 0.8, "confidence": "stated"},
                {"model": "top", "samples": 1, "threshold": 0.5},
            ],
            "calibration": "cal-stated",
            "audit_share": 0.0,
        }
    )
    for stated, decider in ((0.9, 0), (0.5, 1)):
        cheap, top = Stating(5, stated), Scripted(4)
        levels = [
            [scripted_judge(cheap, model_id="cheap", profile=profile, stated=True)],
            [scripted_judge(top, model_id="top", profile=profile)],
        ]
        record = judged(JudgeCascade(levels, spec)).cascade
        assert record is not None and record.level == decider
        assert (record.asked[0].confidence, record.asked[0].confidence_kind) == (stated, "stated")
        assert "probability" in cheap.schemas[0]["properties"]  # the model was asked for it
        assert len(top.calls) == decider


def test_runs_decided_at_any_level_are_one_judges_series() -> None:
    from evalq.core.judge_series import series_id

    low, _, _ = cascade([5, 5, 5], [1, 1, 1])
    high, _, _ = cascade([5, 3, 1], [4, 4, 4])
    decided_low, decided_high = judged(low), judged(high)
    assert (decided_low.cascade.level, decided_high.cascade.level) == (0, 1)
    assert decided_low.identity is not None and decided_high.identity is not None
    assert decided_low.identity.model == "cheap > top"
    assert series_id(decided_low.identity) == series_id(decided_high.identity)
