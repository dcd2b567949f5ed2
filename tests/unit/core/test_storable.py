"""Values the store cannot hold are refused by the wire models, naming the field and the rule.

These rules used to live only in the HTTP API's body parser, so `evalq submit` and the Python
client stored a NUL in ``output`` (or failed with a database traceback on PostgreSQL).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from evalq.core.errors import InvalidInput
from evalq.core.schemas import parse_submission, parse_task
from evalq.core.storable import (
    DEPTH_RULE,
    NUL_RULE,
    SIZE_RULE,
    SURROGATE_RULE,
    decode_json,
    json_text,
)

FULL_SUBMISSION: dict[str, Any] = {
    "id": "run-1",
    "task_id": "task-1",
    "tool": "aider",
    "model": "gpt-4o",
    "variant": "T1",
    "usage": {"input_tokens": 100, "output_tokens": 50, "tool_calls": 2},
    "output": "Fixed the parser.",
    "trace": {
        "steps": [{"tool": "read", "agent": "coder", "context": "open file"}],
        "messages": [{"sender": "planner", "receiver": "coder", "type": "handoff"}],
    },
    "evidence": {
        "files_created": ["fix.py"],
        "errors": ["flaky test"],
        "tests": [{"name": "test_parse", "passed": True}],
    },
    "scenarios": [
        {
            "id": "S1",
            "expected_behaviors": ["greets"],
            "observed_behaviors": ["greets"],
            "must_not_violations": ["leaks"],
        }
    ],
}
FULL_TASK: dict[str, Any] = {
    "id": "task-1",
    "category": "debugging",
    "success_criteria": [
        {"type": "file_exists", "file_path": "fix.py"},
        {"type": "tests_pass", "tests": ["t"]},
    ],
    "reference_outputs": ["A reference review."],
    "context": "The paper.",
    "reference_tool_graph": {"edges": [["read", "edit"]], "start": "read", "end": "edit"},
    "optimal_tools": {"open file": "read"},
    "required_scenarios": ["S1"],
    "profile": "default",
}


def string_leaves(data: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """The path of every string value in ``data``."""
    if isinstance(data, str):
        yield path
    elif isinstance(data, dict):
        for key, value in data.items():
            yield from string_leaves(value, (*path, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from string_leaves(value, (*path, str(index)))


def replaced(data: Any, path: tuple[str, ...], bad: str) -> Any:
    """A copy of ``data`` whose string at ``path`` has ``bad`` inserted in the middle."""
    copy = json.loads(json.dumps(data))
    *parents, last = path
    holder = copy
    for part in parents:
        holder = holder[int(part)] if isinstance(holder, list) else holder[part]
    key: Any = int(last) if isinstance(holder, list) else last
    holder[key] = holder[key][:1] + bad + holder[key][1:]
    return copy


def problems_of(parse: Any, data: Any) -> dict[str, str]:
    with pytest.raises(InvalidInput) as caught:
        parse(data)
    return dict(caught.value.problems)


@pytest.mark.parametrize("bad", ["\x00", "\ud800"], ids=["NUL", "lone surrogate"])
@pytest.mark.parametrize(
    ("parse", "full"),
    [(parse_submission, FULL_SUBMISSION), (parse_task, FULL_TASK)],
    ids=["submission", "task"],
)
def test_every_string_field_refuses_what_the_store_cannot_hold(
    parse: Any, full: dict[str, Any], bad: str
) -> None:
    parse(full)  # valid as it is
    leaves = list(string_leaves(full))
    assert len(leaves) >= 15
    for path in leaves:
        field = ".".join(path)
        found = problems_of(parse, replaced(full, path, bad))
        # the field (pydantic puts a criterion's tag in its path), or the criterion whose
        # discriminating `type` it is
        named = {re.sub(r"\.(file_exists|tests_pass)\.", ".", f) for f in found}
        assert any(field == f or field.startswith(f"{f}.") for f in named), (field, found)
        for named, rule in found.items():
            f"{named}: {rule}".encode()  # printable: a 422 body or a terminal can carry it


@pytest.mark.parametrize(("bad", "rule"), [("\x00", NUL_RULE), ("\ud800", SURROGATE_RULE)])
def test_free_text_names_the_rule(bad: str, rule: str) -> None:
    found = problems_of(parse_submission, FULL_SUBMISSION | {"output": f"ok{bad}ok"})
    assert found == {"output": rule}
    found = problems_of(parse_task, FULL_TASK | {"context": f"ok{bad}ok"})
    assert found == {"context": rule}


def test_keys_are_checked_and_named_printably() -> None:
    found = problems_of(parse_task, FULL_TASK | {"optimal_tools": {"a\x00b": "read"}})
    assert found == {"optimal_tools.a\\x00b.[key]": NUL_RULE}
    found = problems_of(parse_submission, FULL_SUBMISSION | {"usage": {"\ud800x": 1}})
    assert found == {"usage": f"field name: {SURROGATE_RULE}"}


def test_text_the_store_can_hold_passes_unchanged() -> None:
    text = "line\u2028separator\u0085next line \U0001f600 tab\t"
    assert parse_submission(FULL_SUBMISSION | {"output": text}).output == text


@pytest.mark.parametrize(
    ("raw", "rule"),
    [
        (b'{"a": "\xff"}', "must be UTF-8 encoded JSON (bad byte at offset 7)"),
        (b'{"a": 1,', "not valid JSON: Expecting property name enclosed in double quotes"),
        (b'{\n"a" 1}', "(line 2, column 5)"),
        (b'{"a": NaN}', "not valid JSON: NaN is not allowed"),
        (b'{"a": -Infinity}', "not valid JSON: -Infinity is not allowed"),
        (b'{"a": 1e999}', "number must be finite"),
        (b'{"a": ' + b"9" * 5000 + b"}", "integer out of range (at most 2147483647 in magnitude)"),
        (b"[" * 33 + b"]" * 33, "nested deeper than 32 levels"),
        (b"[" * 100_000 + b"]" * 100_000, "nested deeper than 32 levels"),
    ],
)
def test_decoding_refuses_what_no_wire_model_holds(raw: bytes, rule: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        decode_json(raw, where="(line)")
    ((field, found),) = caught.value.problems
    assert field == "(line)" and rule in found


def test_decoding_keeps_valid_json_as_it_is() -> None:
    raw = '{"a": [1, 2.5, "\u2028", {"b": null}], "deep": ' + "[" * 31 + "]" * 31 + "}"
    assert decode_json(raw.encode(), where="(body)") == json.loads(raw)


def test_json_text_is_bounded_in_length_and_depth_and_never_raises_recursion_error() -> None:
    with pytest.raises(InvalidInput) as long:
        json_text("[1, 2, 3]", where="(attribute)", max_chars=8)
    assert long.value.problems == [("(attribute)", f"{SIZE_RULE}: 9 characters, at most 8")]
    with pytest.raises(InvalidInput) as deep:
        json_text("[" * 5000 + "]" * 5000, where="(attribute)")  # RecursionError in json.loads
    assert deep.value.problems == [("(attribute)", DEPTH_RULE)]
    assert json_text("[1, 2, 3]", where="(attribute)", max_chars=9) == [1, 2, 3]
