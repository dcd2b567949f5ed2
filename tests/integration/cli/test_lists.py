"""`evalq task list` and `evalq task submissions TASK --status ...`."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalq.core.errors import NotFound
from evalq.producer.cli import app
from evalq.service.client import Client
from evalq.store import queries
from evalq.store.db import session_scope
from tests.support.databases import fresh_database
from tests.support.settings import configure


def run(sid: str, task_id: str) -> dict[str, object]:
    usage = {"total_tokens": 10}
    return {"id": sid, "task_id": task_id, "tool": "aider", "model": "m", "usage": usage}


@pytest.fixture(params=["sqlite", "postgresql"])
def store(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    with fresh_database(request.param, tmp_path) as url:
        configure(monkeypatch, database_url=url, broker_url="memory://")
        client = Client()
        # reference outputs: their runs fan out (tier 1), so they stay queued with no worker
        fans_out = {"reference_outputs": ["A careful fix."]}
        client.put_task({"id": "alpha", "category": "debugging", "kind": "arena"} | fans_out)
        client.put_task({"id": "beta", "category": "refactoring"} | fans_out)
        client.put_task({"id": "empty", "category": "debugging"})
        client.submit_many([run(f"a{i}", "alpha") for i in range(4)] + [run("b0", "beta")])
        with session_scope(url) as session:
            queries.set_status(session, submission_id="a0", status="done")
            queries.set_status(session, submission_id="a1", status="degraded")
            queries.set_status(session, submission_id="a2", status="done")
        yield url


def cells(output: str) -> list[list[str]]:
    """The body rows of a rich table, split into cells."""
    return [
        [cell.strip() for cell in line.strip("│").split("│")]
        for line in output.splitlines()
        if line.startswith("│")
    ]


def test_task_list_counts_each_task_s_runs_by_status(store: str) -> None:
    result = CliRunner().invoke(app, ["task", "list"])
    assert result.exit_code == 0, result.output
    rows = {row[0]: row[1:8] for row in cells(result.output)}
    #                 kind       category       queued running done degraded failed
    assert rows == {
        "alpha": ["arena", "debugging", "1", "0", "2", "1", "0"],
        "beta": ["peerread (derived)", "refactoring", "1", "0", "0", "0", "0"],  # references
        "empty": ["arena (derived)", "debugging", "0", "0", "0", "0", "0"],
    }


def test_task_submissions_filters_by_status(store: str) -> None:
    result = CliRunner().invoke(
        app, ["task", "submissions", "alpha", "--status", "done", "--status", "degraded"]
    )
    assert result.exit_code == 0, result.output
    assert sorted((row[0], row[1]) for row in cells(result.output)) == [
        ("a0", "done"),
        ("a1", "degraded"),
        ("a2", "done"),
    ]
    assert re.search(r"^3 submission\(s\)$", result.output, re.M)

    everything = CliRunner().invoke(app, ["task", "submissions", "alpha", "--limit", "2"])
    assert len(cells(everything.output)) == 2


def test_task_submissions_names_a_bad_status_or_task(store: str) -> None:
    bad = CliRunner().invoke(app, ["task", "submissions", "alpha", "--status", "finished"])
    assert bad.exit_code == 2
    assert "--status: 'finished' is not one of queued, running, done, degraded, failed" in (
        bad.output
    )
    unknown = CliRunner().invoke(app, ["task", "submissions", "nope"])
    assert isinstance(unknown.exception, NotFound)  # `evalq` prints it as one line, exit 2
