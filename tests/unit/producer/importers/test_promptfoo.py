"""promptfoo rows as submissions, on the published sample and variants of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalq.core.errors import InvalidInput
from evalq.producer.importers.promptfoo import plan_promptfoo

SAMPLE = Path(__file__).parents[3] / "data" / "importers" / "promptfoo_results.json"


def sample() -> Any:
    return json.loads(SAMPLE.read_text())


def test_a_row_without_an_id_is_named_by_its_test_and_prompt() -> None:
    document = sample()
    del document["results"]["results"][0]["id"]
    first = plan_promptfoo(document).submissions[0]
    assert first.id == "promptfoo-eval-WJi-2025-10-01T20:08:11-0-1"
    assert (first.model, first.usage.input_tokens, first.usage.output_tokens) == (
        "openai:gpt-5-mini",
        37,
        245,
    )


def test_only_a_total_is_kept_when_the_split_is_missing() -> None:
    document = sample()
    document["results"]["results"][0]["response"]["tokenUsage"] = {"total": 10, "cached": 10}
    usage = plan_promptfoo(document).submissions[0].usage
    assert (usage.total_tokens, usage.input_tokens) == (10, None)


def test_every_bad_row_is_named() -> None:
    document = sample()
    document["results"]["results"][0]["score"] = "high"
    document["results"]["results"][1]["provider"] = 7
    with pytest.raises(InvalidInput) as refused:
        plan_promptfoo(document)
    assert refused.value.problems == [
        ("results.results[0].score", "must be a number"),
        ("results.results[1].provider", "must be the provider (an object or id)"),
    ]
