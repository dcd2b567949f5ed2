"""`evalq review list` and `evalq review accept ID`: the runs held out of their task's baseline."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import insert
from typer.testing import CliRunner

from evalq.core.schemas import Task
from evalq.producer.cli import app
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.store.models import SubmissionRow
from tests.support.settings import configure
from tests.support.stored_runs import submission_columns

pytestmark = pytest.mark.both_databases  # the database matters here (tests/conftest.py)


def run(
    sid: str, task_id: str, tool: str = "aider", model: str = "gpt-4o", *, outlier: bool = True
) -> dict[str, object]:
    """A stored run; an outlier by spec 000's rule (one tool call in 1 s), as the refresh that
    an accepted review triggers decides again, or a plain one (5 calls in 60 s)."""
    calls, seconds = (1, 1.0) if outlier else (5, 60.0)
    return submission_columns(
        sid, task_id=task_id, tool=tool, model=model, calls=calls, seconds=seconds
    )


@pytest.fixture
def store(db_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Task t1 with runs flagged (f1 by claude-code, f2), plain (ok); task t2 with flagged g1."""
    configure(monkeypatch, database_url=db_url)
    with session_scope(db_url) as session:
        for task_id in ("t1", "t2"):
            queries.put_task(session, task=Task(id=task_id, category="debugging"))
        session.execute(
            insert(SubmissionRow),
            [
                run("f2", "t1"),
                run("f1", "t1", tool="claude-code", model="sonnet"),
                run("ok", "t1", outlier=False),
                run("g1", "t2"),
            ],
        )
        for sid in ("f2", "f1", "g1"):
            queries.flag_for_review(session, submission_id=sid)
    return db_url


def review(url: str, sid: str) -> str | None:
    with session_scope(url) as session:
        return queries.get_submission_row(session, submission_id=sid).review


def test_list_shows_the_flagged_runs_in_id_order(store: str) -> None:
    result = CliRunner().invoke(app, ["review", "list"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if line.startswith("│")]
    assert [line.split("│")[1].strip() for line in lines] == ["f1", "f2", "g1"]
    assert [cell.strip() for cell in lines[0].split("│")[1:-1]] == [
        "f1",
        "t1",
        "claude-code",
        "sonnet",
        "flagged",  # why: its stored flags (none in this store's scores)
    ]


def test_a_long_queue_is_listed_a_page_at_a_time(store: str) -> None:
    from evalq.read import served

    with session_scope(store) as session:
        first = served.held_runs(session, limit=2)
        rest = served.held_runs(session, offset=2, limit=2)
    assert (first.total, [r.id for r in first.runs]) == (3, ["f1", "f2"])
    assert [r.id for r in rest.runs] == ["g1"]
    listed = CliRunner().invoke(app, ["review", "list", "--offset", "2"])
    assert listed.exit_code == 0, listed.output
    assert "g1" in listed.stdout and "f1" not in listed.stdout


def test_list_of_one_task(store: str) -> None:
    result = CliRunner().invoke(app, ["review", "list", "--task", "t2"])
    assert result.exit_code == 0, result.output
    assert "g1" in result.stdout
    assert "f1" not in result.stdout
    result = CliRunner().invoke(app, ["review", "list", "--task", "none"])
    assert result.exit_code == 0, result.output
    assert "no submissions flagged for review" in result.stdout


def test_accept_counts_the_run_again_in_a_refreshed_baseline(store: str) -> None:
    because = ["--reason", "a cached build: real", "--by", "ana"]
    result = CliRunner().invoke(app, ["review", "accept", "f1", *because])
    assert result.exit_code == 0, result.output
    assert "accepted f1; the baseline of t1 counts it (version 1)" in result.stdout
    assert re.search(
        r"recorded: ana at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC: a cached", result.stdout
    )
    assert review(store, "f1") == "accepted"
    with session_scope(store) as session:
        baseline = queries.current_baseline(session, task_id="t1")
        assert baseline is not None and baseline.submission_count == 2  # ok and f1, not f2
    listed = CliRunner().invoke(app, ["review", "list"])
    assert "f1" not in listed.stdout
    assert "f2" in listed.stdout

    again = CliRunner().invoke(app, ["review", "accept", "f1", *because])
    assert again.exit_code == 0, again.output
    assert "f1 was already accepted; nothing changed" in again.stdout
    with session_scope(store) as session:
        assert len(queries.review_decisions(session, submission_id="f1")) == 1


def test_unaccept_holds_the_run_again_and_keeps_both_decisions(
    store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(monkeypatch, actor="ops@example.com")  # who decides when --by is not given
    accepted = CliRunner().invoke(app, ["review", "accept", "f1", "--reason", "looked fine"])
    assert accepted.exit_code == 0, accepted.output
    result = CliRunner().invoke(app, ["review", "unaccept", "f1", "--reason", "it was not"])
    assert result.exit_code == 0, result.output
    assert "un-accepted f1: held for review again, out of the baseline of t1" in result.stdout
    assert review(store, "f1") == "flagged"
    with session_scope(store) as session:
        baseline = queries.current_baseline(session, task_id="t1")
        assert baseline is not None and baseline.submission_count == 1  # ok only
        decisions = queries.review_decisions(session, submission_id="f1")
    assert [(d.action, d.by, d.reason) for d in decisions] == [
        ("unaccept", "ops@example.com", "it was not"),
        ("accept", "ops@example.com", "looked fine"),
    ]
    listed = CliRunner().invoke(app, ["review", "list"])
    assert "f1" in listed.stdout
    again = CliRunner().invoke(app, ["review", "unaccept", "f1", "--reason", "twice"])
    assert "f1 was already held for review; nothing changed" in again.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--by", "ana"], "error: reason: required: why"),
        (["--reason", "  ", "--by", "ana"], "error: reason: required: why"),
        (["--reason", "fine"], "error: by: required: who decides"),  # no --by, no EVALQ_ACTOR
    ],
)
def test_a_decision_without_reason_or_decider_is_refused(
    store: str, args: list[str], message: str
) -> None:
    result = CliRunner().invoke(app, ["review", "accept", "f1", *args])
    assert result.exit_code == 2
    assert message in result.stderr
    assert review(store, "f1") == "flagged"
    with session_scope(store) as session:
        assert queries.review_decisions(session, submission_id="f1") == []


@pytest.mark.parametrize(
    ("sid", "message"),
    [
        ("nope", "error: submission 'nope' does not exist"),
        ("ok", "error: review: submission 'ok' is not flagged for review"),
    ],
)
def test_accept_of_an_unknown_or_unflagged_run_fails(store: str, sid: str, message: str) -> None:
    result = CliRunner().invoke(app, ["review", "accept", sid, "--reason", "r", "--by", "ana"])
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stdout == ""
    assert review(store, "ok") is None
