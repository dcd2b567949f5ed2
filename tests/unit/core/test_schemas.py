"""Wire models reject bad input with the field and the rule named."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalq.core.errors import InvalidInput
from evalq.core.schemas import (
    MAX_TEXT_CHARS,
    MAX_TRACE_EDGES,
    MAX_TRACE_NODES,
    parse_submission,
    parse_task,
)


def valid(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "run-1",
        "task_id": "task-1",
        "tool": "aider",
        "model": "gpt-4o",
        "usage": {"input_tokens": 100, "output_tokens": 50, "tool_calls": 2},
    }
    return base | changes


def problems(data: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(InvalidInput) as caught:
        parse_submission(data)
    return dict(caught.value.problems)


def test_a_valid_submission_derives_total_tokens() -> None:
    assert parse_submission(valid()).usage.total_tokens == 150


def test_unknown_fields_are_rejected_by_name() -> None:
    assert "colour" in problems(valid(colour="red"))
    assert "usage.gpu" in problems(valid(usage={"total_tokens": 1, "gpu": 1}))


@pytest.mark.parametrize(
    ("usage", "field", "rule"),
    [
        ({"total_tokens": -1}, "usage.total_tokens", "greater than or equal to 0"),
        ({"total_tokens": 1, "tool_calls": -2}, "usage.tool_calls", "greater than or equal to 0"),
        ({"total_tokens": 1, "iterations": 0}, "usage.iterations", "greater than or equal to 1"),
        ({"total_tokens": 1, "execution_time": math.nan}, "usage.execution_time", "finite"),
        ({"total_tokens": 1, "cost_usd": math.inf}, "usage.cost_usd", "finite"),
        ({"input_tokens": 1, "output_tokens": 2, "total_tokens": 4}, "usage", "must equal"),
        ({"tool_calls": 1}, "usage", "total_tokens is required"),
    ],
)
def test_bad_usage_names_field_and_rule(usage: dict[str, Any], field: str, rule: str) -> None:
    found = problems(valid(usage=usage))
    assert field in found and rule in found[field]


def test_oversized_output_is_rejected() -> None:
    found = problems(valid(output="x" * (MAX_TEXT_CHARS + 1)))
    assert "at most 100000 characters" in found["output"]


def test_trace_over_the_node_limit_is_rejected() -> None:
    steps = [{"tool": f"tool{i}"} for i in range(MAX_TRACE_NODES + 1)]
    found = problems(valid(trace={"steps": steps}))
    assert "at most 1000" in found["trace"]


def test_trace_over_the_edge_limit_is_rejected() -> None:
    message = {"sender": "a", "receiver": "b", "type": "handoff"}
    found = problems(valid(trace={"messages": [message] * (MAX_TRACE_EDGES + 1)}))
    assert "at most 5000 items" in found["trace.messages"]
    steps = [{"tool": "t"}] * 3000
    found = problems(valid(trace={"steps": steps, "messages": [message] * 3000}))
    assert "at most 5000" in found["trace"]


def test_unknown_message_type_and_variant_are_rejected() -> None:
    found = problems(
        valid(variant="X1", trace={"messages": [{"sender": "a", "receiver": "b", "type": "chat"}]})
    )
    assert "variant" in found and "trace.messages.0.type" in found


def test_unknown_criterion_type_is_a_validation_error() -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_task({"id": "t", "category": "debugging", "success_criteria": [{"type": "vibes"}]})
    (field, rule), *_ = caught.value.problems
    assert field == "success_criteria.0" and "file_exists" in rule


def test_duplicate_scenario_ids_are_rejected() -> None:
    scenario = {"id": "S1", "expected_behaviors": ["greets"]}
    found = problems(valid(scenarios=[scenario, scenario]))
    assert "scenario ids must be unique" in found["(root)"]


STORABLE_TEXT = st.text(  # no NUL, no lone surrogates: test_storable.py covers those
    st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=30
)


@given(STORABLE_TEXT)
def test_content_hash_changes_with_content(output: str) -> None:
    a = parse_submission(valid(output=output))
    b = parse_submission(valid(output=output + "!"))
    assert a.content_hash() == parse_submission(valid(output=output)).content_hash()
    assert a.content_hash() != b.content_hash()


def test_counts_fit_the_stores_32_bit_columns() -> None:
    found = problems(valid(usage={"total_tokens": 2**31}))
    assert "less than or equal to 2147483647" in found["usage.total_tokens"]
    assert parse_submission(valid(usage={"total_tokens": 2**31 - 1})).usage.tokens == 2**31 - 1


def test_scores_stored_before_the_typed_contract_are_still_read() -> None:
    """A store written by evalq 0.1 (no kind, arena `imputed`, judge rubrics by name)."""
    from evalq.core.results import EvaluationScores, JudgeResult

    arena = {
        "submission_id": "s", "task_id": "t", "overall_score": 60.0, "unadjusted_score": 60.0,
        "efficiency_score": 70.0, "speed_score": 50.0, "cost_score": 50.0,
        "correctness_score": 100.0, "efficiency_breakdown": {"tokens": 70.0},
        "breakdown": {"efficiency_weight": 0.35}, "difficulty_factor": 1.0,
        "imputed": ["speed", "cost"], "criteria": [], "baseline_is_default": True,
    }  # fmt: skip
    peer = {
        "composite": 0.5, "recommendation": "weak_reject", "recommendation_weight": -0.7,
        "used": ["time_taken"], "missing": [], "inputs": {"time_taken": 0.5},
    }  # fmt: skip
    judge = {
        "model": "m", "scores": {"constructiveness": 0.75}, "failed": False, "errors": [],
        "rubrics": {"constructiveness": {"status": "ok", "score": 0.75, "criteria": {},
                                         "attempts": 1, "waited_s": 0.0}},
        "attempts": 1, "cache_hits": 0, "skipped": {}, "truncated": {},
    }  # fmt: skip
    stored = {"peerread": peer, "arena": arena, "judge": {"constructiveness": 0.75},
              "tiers": {"judge": judge}, "suite": None}  # fmt: skip
    scores = EvaluationScores.model_validate(stored)
    assert scores.kind == "arena" and scores.arena.not_reported == ()
    assert scores.tiers.judge is not None
    assert scores.tiers.judge.rubric("constructiveness").score == 0.75
    assert JudgeResult.model_validate(judge).attempts == 1


@pytest.mark.parametrize(
    ("usage", "field"),
    [
        ({"total_tokens": 1, "tool_calls": True}, "usage.tool_calls"),  # was stored as 1
        ({"total_tokens": 1, "tool_calls": False}, "usage.tool_calls"),  # was stored as 0
        ({"total_tokens": "12"}, "usage.total_tokens"),  # was stored as 12
        ({"total_tokens": 12.5}, "usage.total_tokens"),
        ({"total_tokens": 1, "iterations": "2"}, "usage.iterations"),
        ({"total_tokens": 1, "execution_time": "94"}, "usage.execution_time"),
        ({"total_tokens": 1, "cost_usd": True}, "usage.cost_usd"),
    ],
)
def test_numbers_are_not_coerced(usage: dict[str, Any], field: str) -> None:
    assert field in problems(valid(usage=usage))


def test_flags_are_not_coerced_and_integers_still_pass_as_floats() -> None:
    assert "passed" in problems(valid(variant="T0", passed="true"))
    assert "evidence.success" in problems(valid(evidence={"success": 1}))
    timed = parse_submission(valid(usage={"total_tokens": 1, "execution_time": 94}))
    assert timed.usage.execution_time == 94.0
