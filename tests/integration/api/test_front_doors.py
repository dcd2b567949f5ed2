"""One submission, three front doors (HTTP API, Python client, `evalq submit`): one verdict.

Before the value rules moved into the wire models, the API refused a NUL in ``output`` that the
client and the CLI stored, and the CLI named neither the line nor the field of some problems.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evalq.core.errors import InvalidInput
from evalq.core.storable import NUL_RULE, SURROGATE_RULE
from evalq.producer.cli import app as cli
from evalq.service.client import Client
from tests.integration.api.conftest import Server, submission

Problems = list[tuple[str, str]]


def through_api(api: Server, body: dict[str, Any]) -> Problems:
    response = api.client().post(
        "/v1/submissions",
        content=json.dumps(body).encode(),  # ASCII escapes carry a lone surrogate
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 422, response.text
    return [(p["field"], p["rule"]) for p in response.json()["detail"]]


def through_client(body: dict[str, Any]) -> Problems:
    with pytest.raises(InvalidInput) as caught:
        Client().submit(body)
    return caught.value.problems


def through_cli(body: dict[str, Any], directory: Path) -> Problems:
    file = directory / "one.jsonl"
    file.write_text(json.dumps(body) + "\n")
    result = CliRunner().invoke(cli, ["submit", str(file), "--no-wait"])
    assert result.exit_code == 2, result.output
    prefix = f"{file}:1: "
    lines = [ln.removeprefix(prefix) for ln in result.output.splitlines() if ln.startswith(prefix)]
    return [tuple(ln.split(": ", 1)) for ln in lines]  # type: ignore[misc]


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"output": "a\x00b"}, [("output", NUL_RULE)]),
        ({"tool": "a\ud800"}, [("tool", SURROGATE_RULE)]),
        ({"task_id": "nope"}, [("task_id", "unknown task 'nope'; define it first")]),
        (
            {"usage": {"total_tokens": 2**40}},
            [("usage.total_tokens", "Input should be less than or equal to 2147483647")],
        ),
        ({"colour\x00": "red"}, [("(root)", f"field name: {NUL_RULE}")]),
        (
            {"planned_runs": 10},
            [("planned_runs", "Value error, needs a variant: a run plan is a variant's")],
        ),
        (
            {"variant": "T1", "planned_runs": 0},
            [("planned_runs", "Input should be greater than or equal to 1")],
        ),
    ],
    ids=[
        "NUL",
        "lone surrogate",
        "unknown task",
        "wide integer",
        "NUL in a key",
        "plan without a variant",
        "empty plan",
    ],
)
def test_every_door_gives_the_same_field_and_rule(
    api: Server, tmp_path: Path, changes: dict[str, Any], expected: Problems
) -> None:
    body = submission("doors-1", **changes)
    before = api.counts()
    assert through_api(api, body) == expected
    assert through_client(body) == expected
    assert through_cli(body, tmp_path) == expected
    assert api.counts() == before
