"""OpenAI Evals API objects as submissions, on the API reference's own examples
(tests/data/importers/openai_evals_export.jsonl) and variants of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalq.core.errors import InvalidInput
from evalq.producer.importers.openai_evals import plan_openai_evals
from evalq.producer.importers.source import parse_records

SAMPLE = Path(__file__).parents[3] / "data" / "importers" / "openai_evals_export.jsonl"
ITEM_ID = "openai-evals-outputitem_67e5796c28e081909917bf79f6e6214d"


def lines() -> list[Any]:
    return [json.loads(line) for line in SAMPLE.read_text().splitlines()]


def jsonl(values: list[Any]) -> bytes:
    return "\n".join(json.dumps(value) for value in values).encode()


def test_an_output_item_maps_to_a_run_with_its_graders_result_kept() -> None:
    plan = plan_openai_evals(parse_records(SAMPLE.read_bytes()))
    assert [task.id for task in plan.tasks] == [
        "openai-evals-eval_67abd54d9b0081909a86353f6fb9317a"
    ]
    (run,) = plan.submissions
    assert (run.id, run.model, run.output) == (ITEM_ID, "gpt-4o-mini-2024-07-18", "Markets")
    assert (run.usage.input_tokens, run.usage.output_tokens) == (323, 2)
    assert run.metadata["imported_score"] == 1.0
    assert run.metadata["imported_pass"] is True
    assert run.metadata["imported_grader"] == (
        "openai_evals/String check-a2486074-d803-4445-b431-ad2262e85d47"
    )
    assert (run.metadata["openai_eval_name"], run.metadata["openai_run_name"]) == (
        "External Data Eval",
        "gpt-4o-mini",
    )


def test_a_bare_item_array_and_the_run_model_for_a_sample_without_one() -> None:
    eval_, run, page = lines()
    item = page["data"][0]
    del item["sample"]["model"]
    plan = plan_openai_evals(parse_records(json.dumps([run, item]).encode()))
    assert plan.submissions[0].model == "gpt-4o-mini"
    assert "openai_eval_name" not in plan.submissions[0].metadata
    with pytest.raises(InvalidInput) as refused:
        plan_openai_evals(parse_records(jsonl([eval_, item])))
    assert refused.value.problems == [("line 2: sample.model", "missing, and no run names a model")]


def test_several_graders_are_all_kept() -> None:
    eval_, run, page = lines()
    item = page["data"][0]
    item["results"].append({"name": "judge", "score": 0.25, "passed": False})
    (run_,) = plan_openai_evals(parse_records(jsonl([eval_, run, page]))).submissions
    assert run_.metadata["imported_scores"] == [
        {
            "grader": "String check-a2486074-d803-4445-b431-ad2262e85d47",
            "score": 1.0,
            "passed": True,
        },
        {"grader": "judge", "score": 0.25, "passed": False},
    ]


@pytest.mark.parametrize(
    ("break_it", "expected"),
    [
        (
            lambda v: v[2]["data"][0]["sample"].pop("usage"),
            ("line 3: data[0].sample.usage", "missing: must be an object (the tokens used)"),
        ),
        (
            lambda v: v[1].__setitem__("object", "eval.runs"),
            ("line 2: object", "must be one of eval, eval.run, eval.run.output_item, list"),
        ),
        (
            lambda v: v[2]["data"].__setitem__(0, 7),
            ("line 3: data[0]", "must be an object (an Evals API object)"),
        ),
        (
            lambda v: v[2]["data"][0]["results"][0].__setitem__("score", "1"),
            ("line 3: data[0].results[0].score", "must be a number"),
        ),
    ],
)
def test_a_record_that_cannot_be_mapped_is_named_by_line_and_path(
    break_it: Any, expected: tuple[str, str]
) -> None:
    values = lines()
    break_it(values)
    with pytest.raises(InvalidInput) as refused:
        plan_openai_evals(parse_records(jsonl(values)))
    assert refused.value.problems == [expected]
