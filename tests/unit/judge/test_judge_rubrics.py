"""The verdict types: enum-constrained integer scores, bounded rationales, nothing extra."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from evalq.core.schemas import RUBRIC_NAMES
from evalq.judge.rubrics import RATIONALE_CHARS, RUBRICS, Criterion, TechnicalAccuracyVerdict


@pytest.mark.parametrize("score", [1, 2, 3, 4, 5])
def test_integer_scores_1_to_5_are_accepted(score: int) -> None:
    assert (
        Criterion.model_validate_json(json.dumps({"score": score, "rationale": "r"})).score == score
    )


@pytest.mark.parametrize("bad", [0, 6, 10, -1, 3.5, 5.0, "5", True, None, "excellent"])
def test_anything_else_is_rejected(bad: object) -> None:
    with pytest.raises(ValidationError):
        Criterion.model_validate_json(json.dumps({"score": bad, "rationale": "r"}))


def test_rationale_is_bounded_and_required() -> None:
    Criterion(score=3, rationale="x" * RATIONALE_CHARS)
    with pytest.raises(ValidationError):
        Criterion(score=3, rationale="x" * (RATIONALE_CHARS + 1))
    with pytest.raises(ValidationError):
        Criterion(score=3, rationale="")


def test_extra_fields_and_missing_criteria_are_rejected() -> None:
    ok = {"score": 3, "rationale": "r"}
    full = {n: ok for n in TechnicalAccuracyVerdict.model_fields}
    TechnicalAccuracyVerdict.model_validate(full)
    with pytest.raises(ValidationError):
        TechnicalAccuracyVerdict.model_validate({**full, "overall_score": ok})
    with pytest.raises(ValidationError):
        TechnicalAccuracyVerdict.model_validate(
            {k: v for k, v in full.items() if k != "domain_knowledge"}
        )


@pytest.mark.parametrize("rubric", RUBRICS, ids=lambda r: r.name)
def test_schema_constrains_scores_by_enum_not_bounds(rubric) -> None:  # type: ignore[no-untyped-def]
    # llama.cpp's JSON-schema grammar honours enum, not minimum/maximum
    schema = rubric.verdict.model_json_schema()
    score = schema["$defs"]["Criterion"]["properties"]["score"]
    assert score["enum"] == [1, 2, 3, 4, 5]
    assert "minimum" not in score and "maximum" not in score
    assert set(schema["properties"]) == set(rubric.criteria)
    for prop in schema["properties"].values():
        assert prop.get("description"), "every criterion carries a description"


def test_rubric_criteria_match_the_profile_weights() -> None:
    from evalq.core.profile import load_profile

    judge = load_profile().judge
    for rubric in RUBRICS:
        assert set(getattr(judge, rubric.name).weights) == set(rubric.criteria)


def test_the_rubrics_are_the_rubric_names_in_order() -> None:
    assert tuple(rubric.name for rubric in RUBRICS) == RUBRIC_NAMES
