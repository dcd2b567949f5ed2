"""Inspect AI samples as submissions, on a published log and variants of it."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalq.core.errors import InvalidInput
from evalq.producer.importers.inspect_log import plan_inspect, plan_inspect_archive
from evalq.producer.importers.source import MAX_IMPORT_BYTES

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


ARCHIVE = SAMPLE.with_suffix(".eval")


def rewritten(change: Callable[[str, bytes], bytes | None]) -> bytes:
    """The published .eval archive with each member passed through ``change`` (None drops it)."""
    out = io.BytesIO()
    with zipfile.ZipFile(ARCHIVE) as source, zipfile.ZipFile(out, "w") as target:
        for name in source.namelist():
            content = change(name, source.read(name))
            if content is not None:
                target.writestr(name, content)
    return out.getvalue()


def test_a_eval_archive_maps_as_its_json_twin() -> None:
    from_archive = plan_inspect_archive(ARCHIVE.read_bytes(), max_bytes=MAX_IMPORT_BYTES)
    assert from_archive == plan_inspect(sample())


def test_a_broken_archive_is_refused_with_the_member_at_fault() -> None:
    def refusal(raw: bytes, max_bytes: int = MAX_IMPORT_BYTES) -> list[tuple[str, str]]:
        with pytest.raises(InvalidInput) as refused:
            plan_inspect_archive(raw, max_bytes=max_bytes)
        return refused.value.problems

    assert refusal(b"PK\x03\x04 not really")[0][0] == "(file)"
    assert refusal(rewritten(lambda n, c: None if n == "header.json" else c)) == [
        ("header.json", "missing: an Inspect .eval log has one")
    ]

    def bad_epoch(name: str, content: bytes) -> bytes:
        if name != "samples/1_epoch_1.json":
            return content
        return json.dumps(json.loads(content) | {"epoch": "one"}).encode()

    assert refusal(rewritten(bad_epoch)) == [
        ("samples/1_epoch_1.json: epoch", "must be the epoch (an integer)")
    ]
    broken = refusal(rewritten(lambda n, c: b"{\n,}" if n == "header.json" else c))
    assert broken[0][0] == "header.json"
    assert broken[0][1].startswith("line 2, column 1: invalid JSON")
    assert refusal(ARCHIVE.read_bytes(), max_bytes=1000) == [
        ("(file)", "larger than 1000 bytes: an import file is read whole; split it")
    ]
