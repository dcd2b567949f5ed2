"""Inspect AI samples as submissions, on a published log and variants of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalq.producer.importers.inspect_log import plan_inspect

SAMPLE = Path(__file__).parents[3] / "data" / "importers" / "inspect_log_formats.json"


def sample() -> Any:
    return json.loads(SAMPLE.read_text())


def test_the_published_sample_maps_as_documented() -> None:
    (task,), (run,) = plan_inspect(sample()).tasks, plan_inspect(sample()).submissions
    assert (task.id, run.id, run.model, run.output) == (
        "inspect-popularity",
        "inspect-9eTnG3tV8jGRYoTPMH54Ee-1-e1",
        "ollama/llama3.1",
        "No",
    )
    assert run.metadata["imported_score"] == "I"
    assert run.metadata["imported_grader"] == "inspect_ai/match"
    assert run.trace is None  # no tool calls


def test_several_scorers_are_all_kept_and_content_parts_joined() -> None:
    document = sample()
    entry = document["samples"][0]
    entry["scores"]["accuracy"] = {"value": 0.5}
    entry["output"]["choices"][0]["message"]["content"] = [
        {"type": "reasoning", "reasoning": "hmm"},
        {"type": "text", "text": "No"},
        {"type": "text", "text": "really"},
    ]
    (run,) = plan_inspect(document).submissions
    assert run.metadata["imported_scores"] == {"match": "I", "accuracy": 0.5}
    assert run.output == "No\nreally"


def test_usage_falls_back_to_the_samples_model_usage() -> None:
    document = sample()
    entry = document["samples"][0]
    del entry["output"]["usage"]
    entry["model_usage"] = {
        "a": {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7},
        "b": {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3},
    }
    (run,) = plan_inspect(document).submissions
    assert (run.usage.input_tokens, run.usage.output_tokens) == (4, 6)
