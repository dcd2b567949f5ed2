"""A hostile body costs a bounded number of problems: capped lists, fail-fast lists, one problem
for an object of many unknown keys, and an `InvalidInput` that lists 50 and counts the rest."""

from __future__ import annotations

from typing import Any

import pytest

from evalq.core.errors import MAX_PROBLEMS, InvalidInput
from evalq.core.schemas import (
    MAX_ITEMS,
    MAX_TRACE_EDGES,
    STORED,
    Submission,
    Task,
    parse_submission,
    parse_submissions,
    parse_task,
)


def submission(**changes: Any) -> dict[str, Any]:
    base = {"id": "r1", "task_id": "t1", "tool": "a", "model": "m", "usage": {"total_tokens": 1}}
    return base | changes


def invalid(data: dict[str, Any]) -> InvalidInput:
    with pytest.raises(InvalidInput) as caught:
        parse_submission(data)
    return caught.value


def test_invalid_input_lists_the_first_50_and_counts_the_rest() -> None:
    error = InvalidInput([(f"f{i}", "bad") for i in range(120)])
    assert (len(error.problems), error.total, error.more) == (MAX_PROBLEMS, 120, 70)
    assert error.problems[-1] == ("f49", "bad")
    assert str(error).endswith("f49: bad; and 70 more problems")


def test_a_long_list_of_bad_steps_is_one_problem() -> None:
    error = invalid(submission(trace={"steps": [{}] * 100_000}))
    assert error.problems == [("trace.steps.0.tool", "Field required")]
    assert error.total == 1


def test_every_list_is_bounded() -> None:
    steps = [{"tool": "t"}] * (MAX_TRACE_EDGES + 2)
    error = invalid(submission(trace={"steps": steps}))
    assert [field for field, _ in error.problems] == ["trace.steps"]
    files = invalid(submission(evidence={"files_created": ["f"] * (MAX_ITEMS + 1)}))
    assert [field for field, _ in files.problems] == ["evidence.files_created"]


def test_many_unknown_keys_are_one_problem_naming_the_fields() -> None:
    error = invalid(submission(**{f"k{i}": 0 for i in range(50_000)}))
    assert len(error.problems) == 1
    field, rule = error.problems[0]
    assert field == "(root)" and "50000 unknown fields" in rule and "task_id" in rule


def test_a_few_unknown_keys_are_still_named_one_by_one() -> None:
    error = invalid(submission(colour=1, size=2))
    assert dict(error.problems) == {
        "colour": "Extra inputs are not permitted",
        "size": "Extra inputs are not permitted",
    }


def test_a_task_id_is_one_path_segment() -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_task({"id": "0/baseline"})
    assert dict(caught.value.problems) == {"id": "Value error, a task id must not contain '/'"}
    assert "task_id" in dict(invalid(submission(task_id="a/b")).problems)


def test_a_submission_id_is_one_path_segment() -> None:
    """``a/../b`` was accepted and answered with a ``url`` that was a 404."""
    rule = "Value error, a submission id must not contain '/'"
    assert dict(invalid(submission(id="a/../b")).problems) == {"id": rule}
    with pytest.raises(InvalidInput) as caught:
        parse_submissions([submission(id="ok-1"), submission(id="sub/with/slashes")])
    assert dict(caught.value.problems) == {"[1].id": rule}
    stored = Submission.model_validate(submission(id="old/run"), context=STORED)
    assert stored.id == "old/run"


def test_a_stored_task_id_with_a_slash_still_loads() -> None:
    assert Task.model_validate({"id": "old/task"}, context=STORED).id == "old/task"
    stored = Submission.model_validate(submission(task_id="old/task"), context=STORED)
    assert stored.task_id == "old/task"


def test_the_schema_says_usage_needs_total_tokens_or_both_parts() -> None:
    """``usage: {}`` was valid for the OpenAPI document and a 422 for the API."""
    schema = Submission.model_json_schema()["$defs"]["Usage"]
    branches = [set(branch["required"]) for branch in schema["anyOf"]]
    assert branches == [{"total_tokens"}, {"input_tokens", "output_tokens"}]
    rule = "total_tokens is required unless input_tokens and output_tokens are both given"
    assert invalid(submission(usage={})).problems == [("usage", f"Value error, {rule}")]
