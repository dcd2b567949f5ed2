"""One reader ranks every board in the database (issue 44, "the old ranking paths are gone").

Every door's board read goes through `evalq.read.leaderboard.leaderboard`, which ranks the
task's standings in SQL whatever it is asked: every entry (no limit), a metadata filter, a
filtered Scylla or suite board (its variant board and rank intervals drawn over the runs it
ranks only), or standings behind the task's basis (ranked as stored, and said). None of them
loads the task whole: `queries.task_evaluations`, which `task_view` reads every run with,
raises here, and the boards still equal `board_of` over the task loaded whole. A redefinition
of a task with runs rescores its standings in its own transaction, at every door.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update
from tests.integration.read.test_held_runs import copy_of
from tests.support.cloned_task import cloned_task
from tests.support.settings import configure
from tests.support.ui import sign_in
from typer.testing import CliRunner

from evalq.core.settings import Settings
from evalq.producer.api.app import create_app
from evalq.producer.cli import app
from evalq.read import served
from evalq.read.board_page import board_page
from evalq.read.boards.query import BoardQuery
from evalq.read.leaderboard import board_of
from evalq.read.view import task_view
from evalq.service.client import Client
from evalq.store import queries
from evalq.store import standings as table
from evalq.store.db import session_scope
from evalq.store.keys import create_key
from evalq.store.models import StandingRow, SubmissionRow, utcnow

TEMPLATES = {
    "arena": "arena-frontend-dark-mode",
    "peerread": "peerread-salience-gating",
    "scylla": "scylla-token-bucket",
    "suite": "suite-refund-agent",
}
READS: list[dict[str, Any]] = [
    {},  # every entry, no limit
    {"limit": 4, "offset": 2},
    {"include_held": True},
    {"status": "done", "limit": 5},
    {"metadata": {"attempt": "2"}},  # the clones' 2 and "2" (`cloned_task.ATTEMPTS`)
    {"metadata": {"attempt": "true", "shard": "s1"}, "limit": 3},
    {"metadata": {"attempt": "2.5"}, "include_held": True},
    {"metadata": {"attempt": "3"}},  # no run has it: an empty board
]


@pytest.fixture(scope="module")
def tasks(store: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[str]]]:
    """A copy of the bundled examples' store with a task of every kind cloned (36 runs each,
    refreshed)."""
    url = copy_of(store, tmp_path_factory.mktemp("one-reader"))
    made = [
        cloned_task(url, template=template, task_id=f"one-{kind}", size=36, seed=7)
        for kind, template in TEMPLATES.items()
    ]
    yield url, made


def whole_task_reads_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("a board read loaded the task whole")

    monkeypatch.setattr(queries, "task_evaluations", refused)


def expected(url: str, task_id: str, read: dict[str, Any]) -> list[tuple[Any, ...]]:
    """What `board_of` lists over the task loaded whole, cut as ``read`` asks."""
    filters = {k: v for k, v in read.items() if k not in ("limit", "offset")}
    with session_scope(url) as session:
        whole = board_of(task_view(session, task_id=task_id), **filters)
    start = read.get("offset", 0)
    end = None if read.get("limit") is None else start + read["limit"]
    return [said(e) for e in whole.entries[start:end]]


def said(entry: Any) -> tuple[Any, ...]:
    return (
        entry.submission_id,
        entry.rank,
        entry.ranking_value,
        entry.percentile,
        entry.held,
        entry.category_ranks,
        entry.rank_interval,
        entry.rank_interval_note,
        entry.not_separable_from,
    )


def test_every_board_read_ranks_in_the_database_and_equals_the_whole_task_board(
    tasks: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, made = tasks
    wanted = {(t, i): expected(url, t, read) for t in made for i, read in enumerate(READS)}
    with session_scope(url) as session:
        variants = {t: board_of(task_view(session, task_id=t)).variants for t in made}
    whole_task_reads_refused(monkeypatch)
    for task_id in made:
        for i, read in enumerate(READS):
            with session_scope(url) as session:
                board = served.board(session, BoardQuery(task_id=task_id, **read))
                page = board_page(session, BoardQuery(task_id=task_id, **read))
            assert [said(e) for e in board.entries] == wanted[task_id, i], (task_id, read)
            assert [said(e) for e in page.board.entries] == wanted[task_id, i], (task_id, read)
            assert board.rescoring_note is None
            if "metadata" in read and "limit" not in read:
                # the page's histogram counts the rows the filter keeps, not the task's
                valued = [
                    e for e in board.entries if e.rank is not None and e.ranking_value is not None
                ]
                assert sum(page.bins) == len(valued), (task_id, read)
            if read.get("metadata", {}).get("attempt") == "3":
                assert board.entries == [] and board.total == 0
        with session_scope(url) as session:
            unfiltered = served.board(session, BoardQuery(task_id=task_id))
        assert unfiltered.variants == variants[task_id]


def test_a_filtered_scylla_board_draws_its_variant_board_over_its_own_runs(
    tasks: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _ = tasks
    task_id = "one-scylla"
    filters = {"metadata": {"shard": "s0"}}
    with session_scope(url) as session:
        whole = board_of(task_view(session, task_id=task_id), **filters)
    whole_task_reads_refused(monkeypatch)
    with session_scope(url) as session:
        board = served.board(session, BoardQuery(task_id=task_id, **filters))
    assert whole.variants and board.variants == whole.variants
    assert sum(v.runs for v in board.variants) == len([e for e in board.entries if e.rank])


def test_standings_behind_the_basis_are_ranked_as_stored_and_said(
    tasks: tuple[str, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, _ = tasks
    url = copy_of(source, tmp_path)
    task_id = "one-arena"
    with session_scope(url) as session:
        behind = list(
            session.scalars(
                select(StandingRow.submission_id)
                .where(StandingRow.task_id == task_id)
                .order_by(StandingRow.submission_id)
                .limit(3)
            )
        )
        # three runs merged while the refresh ran: scored against the baseline before the one
        # it stored (the lowest value), their merge moving the task's version
        session.execute(
            update(StandingRow)
            .where(StandingRow.submission_id.in_(behind))
            .values(basis="0:an earlier profile", arena_key=-1.0)
        )
        session.execute(
            update(SubmissionRow).where(SubmissionRow.id.in_(behind)).values(updated_at=utcnow())
        )
    whole_task_reads_refused(monkeypatch)
    with session_scope(url) as session:
        board = served.board(session, BoardQuery(task_id=task_id))
    assert board.rescoring_note is not None
    assert "3 placed by their scores against an earlier baseline" in board.rescoring_note
    # placed by their stored (lowest) values, last among the ranked
    ranked = [e.submission_id for e in board.entries if e.rank is not None]
    assert sorted(ranked[-3:]) == behind
    monkeypatch.undo()
    # said at every door: the terminal's board and the UI's
    configure(monkeypatch, database_url=url)
    try:
        terminal = CliRunner().invoke(app, ["leaderboard", task_id])
    finally:
        monkeypatch.undo()
        configure(monkeypatch)  # the process's settings read again without this store
    assert terminal.exit_code == 0, terminal.output
    assert "Being rescored: Of the task's" in " ".join(terminal.output.split())
    with session_scope(url) as session:
        key = create_key(session, name="rescoring", scopes=["read"])
    settings = Settings(database_url=url, auth_required=True)
    with TestClient(create_app(settings), base_url="https://testserver") as browser:
        assert sign_in(browser, key).status_code == 303
        page = browser.get(f"/ui/tasks/{task_id}").text
    assert 'id="rescoring-note"' in page and "3 placed by their scores" in page
    with session_scope(url) as session:
        served.refresh_task(session, task_id=task_id)
    with session_scope(url) as session:
        board = served.board(session, BoardQuery(task_id=task_id))
    assert board.rescoring_note is None


def redefined(url: str, task_id: str) -> dict[str, Any]:
    with session_scope(url) as session:
        definition = queries.get_task(session, task_id=task_id).model_dump(mode="json")
    return definition | {"context": f"{definition.get('context') or ''} (redefined)"}


def current(url: str, task_id: str) -> bool:
    with session_scope(url) as session:
        return (
            table.has_standings(session, task_id=task_id)
            and served.board(session, BoardQuery(task_id=task_id, limit=5)).rescoring_note is None
        )


@pytest.mark.parametrize("door", ["client", "api"])
def test_a_redefinition_rescores_the_tasks_standings_at_every_door(
    tasks: tuple[str, list[str]], tmp_path: Path, door: str
) -> None:
    source, _ = tasks
    url = copy_of(source, tmp_path)
    task_id = "one-peerread"
    assert current(url, task_id)
    settings = Settings(database_url=url, auth_required=True)
    if door == "client":
        Client(settings).put_task(redefined(url, task_id))
    else:
        with session_scope(url) as session:
            key = create_key(session, name="define", scopes=["read", "write"])
        with TestClient(create_app(settings)) as api:
            answer = api.put(
                f"/v1/tasks/{task_id}",
                json=redefined(url, task_id),
                headers={"Authorization": f"Bearer {key}"},
            )
        assert answer.status_code == 200, answer.text
        assert answer.json()["changed"] is True
    # scored for the definition stored, in the same transaction: no board says otherwise
    assert current(url, task_id)


def test_a_long_page_sorts_the_category_keys_once_to_the_same_ranks(
    tasks: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _ = tasks
    # an Arena board read whole after a merge (ranked by counts, not in stored places): each
    # listed row's category ranks from the sorted keys, not from a count per row
    monkeypatch.setattr(table, "COUNTED_CATEGORY_ROWS", 2)
    read = {"include_held": True}
    wanted = expected(url, "one-arena", read)
    with session_scope(url) as session:
        board = served.board(session, BoardQuery(task_id="one-arena", **read))
    assert [said(e) for e in board.entries] == wanted
    assert len({e.category_ranks.efficiency for e in board.entries if e.category_ranks}) > 2
