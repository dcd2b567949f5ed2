"""Bodies built to be expensive get a small 422: the first 50 problems and a count of the rest."""

from __future__ import annotations

import json

from tests.integration.api.conftest import Server
from tests.support.hostile import empty_batch, empty_steps, unknown_keys, wrong_batch

MAX_BATCH = 50
"""The API fixture's EVALQ_API_MAX_BATCH."""
PROBLEMS_PER_WRONG_ITEM = 34
"""Counted by hand in `tests.support.hostile.wrong_item`: 6 top-level fields, 4 in usage, output,
the first step (3) and message (1) of the trace, 4 in evidence, the first scenario (3), passed,
impl_rate and 10 unknown keys."""


def post(api: Server, body: bytes) -> tuple[int, dict[str, object], int]:
    response = api.client().post(
        "/v1/submissions", content=body, headers={"Content-Type": "application/json"}
    )
    return response.status_code, response.json(), len(response.content)


def test_a_batch_of_bad_items_lists_50_problems_and_counts_them_all(api: Server) -> None:
    before = api.counts()
    status, answer, size = post(api, wrong_batch(1024 * 1024, MAX_BATCH))
    assert status == 422
    assert len(answer["detail"]) == 50  # type: ignore[arg-type]
    assert answer["more"] == MAX_BATCH * PROBLEMS_PER_WRONG_ITEM - 50
    assert answer["detail"][0] == {
        "field": "submissions.0.id",
        "rule": "Input should be a valid string",
    }  # type: ignore[index]
    assert size < 8 * 1024
    assert api.counts() == before


def test_a_batch_over_the_limit_is_refused_before_its_items_are_read(api: Server) -> None:
    status, answer, _ = post(api, empty_batch(64 * 1024))
    assert status == 422
    assert answer == {
        "detail": [
            {
                "field": "submissions",
                "rule": "at most 50 submissions per request (EVALQ_API_MAX_BATCH)",
            }
        ]
    }


def test_a_trace_of_bad_steps_is_one_problem(api: Server) -> None:
    status, answer, _ = post(api, empty_steps(1024 * 1024))
    assert (status, answer) == (
        422,
        {"detail": [{"field": "trace.steps.0.tool", "rule": "Field required"}]},
    )


def test_an_object_of_unknown_keys_is_one_problem(api: Server) -> None:
    status, answer, size = post(api, unknown_keys(256 * 1024))
    assert status == 422 and size < 1024
    (problem,) = answer["detail"]  # type: ignore[misc]
    assert problem["field"] == "(root)" and "unknown fields" in problem["rule"]
    assert "more" not in answer


def test_the_largest_hostile_body_answers_in_a_few_hundred_bytes(api: Server) -> None:
    """5 MiB of empty trace steps once answered with 105 MB of problems."""
    before = api.counts()
    status, answer, size = post(api, empty_steps(5 * 1024 * 1024))
    assert status == 422 and size < 1024, json.dumps(answer)[:500]
    assert api.counts() == before
