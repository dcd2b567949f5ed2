"""A run's page names its Arena overall as the number its board ranks it by; the score after
the task's difficulty factor, where it differs, is named as such beside it."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from tests.support.settings import configure
from tests.support.ui import sign_in

from evalq.core.settings import Settings
from evalq.producer.api.app import create_app
from evalq.read.boards.query import BoardQuery
from evalq.read.leaderboard import leaderboard
from evalq.store.db import session_scope
from evalq.store.keys import create_key

ARENA = "arena-frontend-dark-mode"  # an advanced task: its difficulty factor is not 1


def test_the_run_page_shows_the_number_the_board_ranks_by(store: str) -> None:
    with session_scope(store) as session:
        board = leaderboard(session, task_id=ARENA)
        key = create_key(session, name="one-number", scopes=["read"])
    entry = next(e for e in board.entries if e.overall != e.overall_adjusted)
    settings = Settings(database_url=store, auth_required=True)
    with TestClient(create_app(settings), base_url="https://testserver") as browser:
        assert sign_in(browser, key).status_code == 303
        page = browser.get(f"/ui/runs/{entry.submission_id}").text
    cell = page[page.index('data-score="arena-overall"') :].split("</td>", 1)[0]
    assert f">{entry.overall:.2f}, the number the board ranks by" in cell
    assert f"{entry.overall_adjusted:.2f} after the task's difficulty factor" in cell


def test_the_tasks_list_names_each_task_s_kind_even_when_derived(store: str) -> None:
    from evalq.store import queries

    with session_scope(store) as session:
        kinds = {o.task.id: (o.kind, o.task.kind) for o in queries.task_overviews(session)}
    # the bundled tasks name no kind: each is derived from what its runs carry
    assert {kind for kind, named in kinds.values() if named is None} == {
        "arena",
        "peerread",
        "scylla",
        "suite",
    }
    assert kinds["scylla-token-bucket"][0] == "scylla"
    assert kinds["suite-refund-agent"][0] == "suite"


def test_the_board_shows_what_its_kind_answers_with(store: str) -> None:
    """A suite board says each run's gate, a PeerRead board each recommendation, and what a
    composite without a judge cannot see once, not on every row."""
    with session_scope(store) as session:
        key = create_key(session, name="kind-columns", scopes=["read"])
        suite = leaderboard(session, task_id="suite-refund-agent")
        peer = leaderboard(session, task_id="peerread-salience-gating")
    settings = Settings(database_url=store, auth_required=True)
    with TestClient(create_app(settings), base_url="https://testserver") as browser:
        assert sign_in(browser, key).status_code == 303
        suite_page = browser.get("/ui/tasks/suite-refund-agent").text
        peer_page = browser.get("/ui/tasks/peerread-salience-gating").text
    assert '<th scope="col">gate</th>' in suite_page
    for entry in suite.entries:
        row = suite_page[suite_page.index(f'<tr data-run="{entry.submission_id}"') :]
        gate = "passed" if entry.suite_passed else "blocked"
        assert f">{gate}</td>" in row.split("</tr>", 1)[0]
    assert '<th scope="col">recommendation</th>' in peer_page
    noted = [e for e in peer.entries if e.peerread_note]
    note = noted[0].peerread_note
    assert noted and f'<p class="note" id="no-judge">Rows marked “no judge”: {note}.' in peer_page
    assert peer_page.count(f'title="{note}">no judge</span>') == len(noted)  # short per row


def test_each_door_names_the_leader_the_board_ranks_first(
    store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tasks page, ``GET /v1/tasks`` and `evalq task list` name the run the board ranks
    first, from the places the refresh stored (one read: `served.task_list`)."""
    from typer.testing import CliRunner

    from evalq.producer.cli import app
    from evalq.read import served

    with session_scope(store) as session:
        lines = {line.id: line for line in served.task_list(session).tasks}
        firsts = {}
        for task_id in lines:
            board = leaderboard(session, task_id=task_id)
            ranked = [e for e in board.entries if e.rank == 1]
            firsts[task_id] = sorted(e.submission_id for e in ranked)
        key = create_key(session, name="leaders", scopes=["read"])
    assert len(lines) >= 6
    for task_id, line in lines.items():
        assert line.leader is not None, task_id
        assert line.leader.submission_id == firsts[task_id][0], task_id
        assert line.leader.tied == len(firsts[task_id]), task_id
    settings = Settings(database_url=store, auth_required=True)
    with TestClient(create_app(settings), base_url="https://testserver") as browser:
        served_json = browser.get("/v1/tasks", headers={"Authorization": f"Bearer {key}"})
        assert sign_in(browser, key).status_code == 303
        page = browser.get("/").text
    assert served_json.status_code == 200, served_json.text
    from evalq.service.client import Client

    assert Client(Settings(database_url=store)).tasks() == served_json.json()
    assert [t["leader"]["submission_id"] for t in served_json.json()["tasks"]] == [
        lines[t].leader.submission_id
        for t in sorted(lines)  # type: ignore[union-attr]
    ]
    for task_id, line in lines.items():
        assert line.leader is not None
        row = page[page.index(f'<tr data-task="{task_id}"') :].split("</tr>", 1)[0]
        assert f'<a href="/ui/runs/{line.leader.submission_id}">' in row, row
    from evalq.producer.cli.output import console

    monkeypatch.setattr(console, "width", 1000)  # a cell's text on one line
    configure(monkeypatch, database_url=store)  # the CLI's settings, not an earlier test's
    listed = CliRunner().invoke(app, ["task", "list"])
    assert listed.exit_code == 0, listed.output
    for line in lines.values():
        assert line.leader is not None and line.leader.submission_id in listed.output


def test_the_arena_board_answers_first_and_the_report_says_the_same(store: str) -> None:
    """Leader, the gap to the next agent and whether single runs can tell them apart: the UI's
    board and the static report give the same sentences (one `arena_answer`)."""
    from markupsafe import escape

    from evalq.read import served
    from evalq.read.board_page import board_page
    from evalq.report.verdict import arena_verdict

    with session_scope(store) as session:
        page = board_page(
            session, BoardQuery(task_id=ARENA, limit=50), settings=Settings(database_url=store)
        )
        report = served.report(session, task_id=ARENA)
        key = create_key(session, name="answer", scopes=["read"])
    assert page.verdict is not None and page.verdict.answer is not None
    answer = page.verdict.answer
    top = [e for e in report.ranked if e.rank == 1]
    assert answer.leader.submission_id == min(e.submission_id for e in top)
    assert str(escape(answer.statement)) in arena_verdict(report)
    settings = Settings(database_url=store, auth_required=True)
    with TestClient(create_app(settings), base_url="https://testserver") as browser:
        assert sign_in(browser, key).status_code == 303
        html = browser.get(f"/ui/tasks/{ARENA}").text
    shown = html[html.index('<p class="answer"') :].split("</p>", 1)[0]
    assert str(escape(answer.statement)) in shown
    # the bundled Arena tasks hold one run per agent: the answer says the order cannot tell
    assert answer.separable is False and 'data-answer="single-runs"' in shown
