"""Sessions through the in-process doors (`Client`, the CLI): runs sent as JSON that name
``session.id`` form a session; the sweep's claim is won once; a late turn reopens it; bad input
is refused naming the field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evalq.core.errors import InvalidInput, NotFound
from evalq.core.results import JudgeResult
from evalq.core.schemas import Submission, Task
from evalq.core.settings import get_settings
from evalq.producer.cli import app
from evalq.service.client import Client
from evalq.service.sessions import sweep_sessions
from evalq.store import sessions as stored
from evalq.store.db import session_scope
from tests.support.databases import fresh_database
from tests.support.settings import configure

pytestmark = pytest.mark.both_databases  # the claims and the board's order are SQL

TASK = {"id": "chat-1", "category": "debugging", "success_criteria": [{"type": "no_errors"}]}


def run(sid: str, session_id: str, *, ok: bool, task_id: str = "chat-1") -> dict[str, Any]:
    return {
        "id": sid,
        "task_id": task_id,
        "tool": "aider",
        "model": "gpt-4o",
        "usage": {"total_tokens": 100, "tool_calls": 1, "execution_time": 3.0},
        "evidence": {"success": ok, "errors": [] if ok else ["the tool timed out"]},
        "metadata": {"session.id": session_id},
    }


@pytest.fixture(params=["sqlite", "postgresql"])
def url(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    with fresh_database(request.param, tmp_path) as db_url:
        configure(monkeypatch, database_url=db_url, session_quiet_s="0")
        monkeypatch.delenv("EVALQ_BROKER_URL", raising=False)
        get_settings.cache_clear()
        Client().put_task(TASK)
        yield db_url


def sweep(url: str) -> list[tuple[str, str]]:
    return sweep_sessions(url, get_settings())


def test_runs_naming_a_session_are_scored_once_and_again_after_a_late_turn(url: str) -> None:
    client = Client()
    client.submit_many([run("t1", "s1", ok=False), run("t2", "s1", ok=True)])
    assert sweep(url) == [("chat-1", "s1")]
    assert sweep(url) == []  # nothing due: evaluated once
    found = client.session("s1")
    assert (found.status, found.turns, found.evaluations) == ("evaluated", ["t1", "t2"], 1)
    assert found.scores is not None
    assert (found.scores.passed, found.scores.turns_to_success) == (True, 2)
    client.submit(run("t3", "s1", ok=False))  # a late turn
    assert client.session("s1").status == "open"
    assert sweep(url) == [("chat-1", "s1")]
    again = client.session("s1")
    assert again.evaluations == 2 and again.scores is not None
    assert (again.scores.turns, again.scores.passed) == (3, False)
    # each run keeps its own evaluation
    assert client.status("t3") == "done"


def test_of_two_sweeps_one_claims_a_session(url: str) -> None:
    Client().submit(run("a", "s2", ok=True))
    quiet, reclaim = timedelta(0), timedelta(seconds=60)
    with session_scope(url) as session:
        first = stored.claim_session(
            session, task_id="chat-1", session_id="s2", quiet=quiet, reclaim_after=reclaim
        )
    with session_scope(url) as session:
        second = stored.claim_session(
            session, task_id="chat-1", session_id="s2", quiet=quiet, reclaim_after=reclaim
        )
    assert first is not None and second is None
    assert sweep(url) == []  # held by the first claim, not yet old enough to take again


def test_bad_input_at_the_client_and_the_cli_names_the_field(url: str) -> None:
    client = Client()
    client.put_task(TASK | {"id": "chat-2"})
    client.submit_many(
        [run("x1", "shared", ok=True), run("x2", "shared", ok=True, task_id="chat-2")]
    )
    sweep(url)
    with pytest.raises(InvalidInput) as two:
        client.session("shared")
    assert two.value.problems[0][0] == "task_id"
    assert client.session("shared", task_id="chat-2").turns == ["x2"]
    with pytest.raises(NotFound):
        client.session("nobody")
    with pytest.raises(InvalidInput) as bad:
        client.session_board("chat-1", limit=0)
    assert bad.value.problems == [("limit", "must be from 1 to 1000")]
    with pytest.raises(NotFound):
        client.session_board("no-such-task")

    cli = CliRunner()
    shown = cli.invoke(app, ["session", "show", "shared", "--task-id", "chat-1"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["turns"] == ["x1"]
    board = cli.invoke(app, ["session", "board", "chat-1"])
    assert board.exit_code == 0, board.output
    assert "1  shared  evaluated  1 turn(s)  passed  first success at turn 1" in board.output
    refused = cli.invoke(app, ["session", "board", "chat-1", "--limit", "0"])
    assert refused.exit_code == 2 and "limit: must be from 1 to 1000" in refused.output
    ambiguous = cli.invoke(app, ["session", "show", "shared"])
    assert ambiguous.exit_code == 2 and "task_id" in ambiguous.output


def test_a_judge_that_crashes_leaves_the_session_scored_and_says_so(url: str) -> None:
    def crashing(transcript: Submission, task: Task) -> JudgeResult | None:
        assert transcript.output.startswith("Turn 1 (j1):")
        raise RuntimeError("the judge's provider library broke")

    Client().submit(run("j1", "s3", ok=True))
    assert sweep_sessions(url, get_settings(), judge=crashing) == [("chat-1", "s3")]
    found = Client().session("s3")
    assert found.scores is not None
    assert (found.scores.passed, found.scores.judge, found.scores.judge_failed) == (
        True,
        None,
        True,
    )
