"""Submission metadata: its limits, its place in the content hash, and how filters match it."""

from __future__ import annotations

from typing import Any

import pytest

from evalq.core.errors import InvalidInput
from evalq.core.metadata import MAX_BYTES, MAX_KEYS, as_text, filter_problems, matches
from evalq.core.schemas import parse_submission
from evalq.core.storable import NUL_RULE, SURROGATE_RULE

RUN = {"id": "r", "task_id": "t", "tool": "a", "model": "m", "usage": {"total_tokens": 1}}
HASH_BEFORE_METADATA = "d4703172cd7a80555245699d3080b09a8319051fa185556d205eb43dba363925"
"""`content_hash` of RUN as computed before submissions had metadata (commit 8faa91c)."""


def rule_for(metadata: Any) -> str:
    with pytest.raises(InvalidInput) as caught:
        parse_submission(RUN | {"metadata": metadata})
    [(field, rule)] = caught.value.problems
    assert field == "metadata"
    return rule


def test_metadata_within_the_limits_is_kept_as_sent() -> None:
    metadata = {
        "run_id": "2026-11-23.7",
        "git-sha": "4f2a1c",
        "attempt": 3,
        "warm": True,
        "note": None,
        "config": {"temperature": 0.2, "tools": ["grep", "edit"]},
    }
    assert parse_submission(RUN | {"metadata": metadata}).metadata == metadata
    assert parse_submission(RUN).metadata == {}
    at_the_limits = {"a": {"b": {"c": 1}}, "x": {"y": [1, 2]}, "k" * 64: "v" * 3900}
    assert parse_submission(RUN | {"metadata": at_the_limits}).metadata == at_the_limits


@pytest.mark.parametrize(
    ("metadata", "rule"),
    [
        ({"a": {"b": {"c": {}}}}, "a.b.c: nested deeper than 3 levels"),
        ({"a": [[1]], "b": {"c": [[2]]}}, "b.c.0: nested deeper than 3 levels"),
        ({str(i): i for i in range(MAX_KEYS + 1)}, f"{MAX_KEYS + 1} keys; at most {MAX_KEYS}"),
        ({"a": {str(i): i for i in range(33)}}, "a: 33 keys; at most 32"),
        ({"a": "x" * MAX_BYTES}, f"metadata is {MAX_BYTES + 8} bytes as JSON; at most 4096"),
        ({"a": "\x00"}, f"a: {NUL_RULE}"),
        ({"a": ["ok", "\udc00"]}, f"a.1: {SURROGATE_RULE}"),
        ({"a": float("inf")}, "a: number must be finite"),
        ({"k" * 65: 1}, None),
        ({"run id": 1}, None),
        ({"-x": 1}, None),
        ({"a": {"b c": 1}}, None),
        ({"\x00": 1}, None),
    ],
)
def test_metadata_beyond_a_limit_names_the_key_and_the_rule(
    metadata: dict[str, Any], rule: str | None
) -> None:
    found = rule_for(metadata)
    if rule is None:
        assert "a metadata key is 1 to 64 letters, digits" in found
        assert "\x00" not in found
    else:
        assert found == rule


def test_metadata_must_be_an_object() -> None:
    assert rule_for(["a"]) == "Input should be a valid dictionary"


def test_a_run_without_metadata_hashes_as_before_the_field_existed() -> None:
    """Re-sending a run stored before metadata existed is still the same run, not a 409."""
    assert parse_submission(RUN).content_hash() == HASH_BEFORE_METADATA
    assert parse_submission(RUN | {"metadata": {}}).content_hash() == HASH_BEFORE_METADATA


def test_metadata_is_part_of_the_content_an_id_stands_for() -> None:
    tagged = parse_submission(RUN | {"metadata": {"git_sha": "4f2a1c"}}).content_hash()
    other = parse_submission(RUN | {"metadata": {"git_sha": "000000"}}).content_hash()
    assert len({tagged, other, HASH_BEFORE_METADATA}) == 3


@pytest.mark.parametrize(
    ("value", "text"),
    [("v2", "v2"), (3, "3"), (2.5, "2.5"), (True, "true"), (None, "null"), ([1], None), ({}, None)],
)
def test_filters_compare_scalars_as_their_text(value: Any, text: str | None) -> None:
    assert as_text(value) == text
    assert matches({"k": value}, {"k": text or "[1]"}) is (text is not None)


def test_every_filter_must_match_and_a_missing_key_never_does() -> None:
    metadata = {"experiment": "v2", "attempt": 3}
    assert matches(metadata, {})
    assert matches(metadata, {"experiment": "v2", "attempt": "3"})
    assert not matches(metadata, {"experiment": "v2", "attempt": "4"})
    assert not matches(metadata, {"missing": "null"})


def test_a_filter_on_a_key_no_metadata_can_have_is_named() -> None:
    assert filter_problems({"ok.key": "x"}) == []
    assert [field for field, _ in filter_problems({"bad key": "x"})] == ["metadata.bad key"]
    assert filter_problems({"k": "x" * 201}) == [("metadata.k", "at most 200 characters")]
