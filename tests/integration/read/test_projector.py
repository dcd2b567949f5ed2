"""Only the projector writes the boards' read model; a board read never writes (issue 44): not
on a quiet board, not when the task's figures were never stored, not when its standings are
behind its basis (then the whole task is ranked from its runs, and equals the pure board)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from sqlalchemy import delete, event, select, update

from evalq.read import served
from evalq.read.board_page import board_page
from evalq.read.leaderboard import board_of
from evalq.read.view import task_view
from evalq.store.db import engine_for, session_scope
from evalq.store.models import BoardFiguresRow, StandingRow, TaskRow

WRITES = ("insert", "update", "delete", "upsert", "replace")


def writes_during(url: str, read: Any) -> list[str]:
    """The writing statements ``read(session)`` issued (a SQLAlchemy event listener)."""
    written: list[str] = []

    def seen(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().lower().startswith(WRITES):
            written.append(statement)

    engine = engine_for(url)
    event.listen(engine, "before_cursor_execute", seen)
    try:
        with session_scope(url) as session:
            read(session)
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    return written


def every_board_read(url: str, task_id: str) -> None:
    """The board reads every door makes: the API's pages, the UI's page, the whole board."""
    for limit, offset in ((50, 0), (3, 1)):
        assert not writes_during(
            url,
            lambda s, limit=limit, offset=offset: served.board(
                s, task_id=task_id, limit=limit, offset=offset
            ),
        )
        assert not writes_during(
            url, lambda s, limit=limit: board_page(s, task_id=task_id, limit=limit)
        )
    assert not writes_during(url, lambda s: served.board(s, task_id=task_id, model="o3", limit=5))
    assert not writes_during(url, lambda s: served.board(s, task_id=task_id))


def test_board_reads_write_nothing_whatever_the_read_model_holds(
    store: str, tmp_path: Path
) -> None:
    path = Path(store.removeprefix("sqlite:///"))
    copy = tmp_path / "copy.db"
    shutil.copyfile(path, copy)
    url = f"sqlite:///{copy}"
    with session_scope(url) as session:
        tasks = list(session.scalars(select(TaskRow.id).order_by(TaskRow.id)))
    for task_id in tasks:  # quiet boards: everything the refresh stores is there
        every_board_read(url, task_id)
    with session_scope(url) as session:  # figures never stored, one standing per task behind
        session.execute(delete(BoardFiguresRow))
        for task_id in tasks:
            first = session.scalar(
                select(StandingRow.submission_id).where(StandingRow.task_id == task_id).limit(1)
            )
            session.execute(
                update(StandingRow)
                .where(StandingRow.submission_id == first)
                .values(basis="an older baseline", arena_key=0.0)
            )
    for task_id in tasks:
        every_board_read(url, task_id)
        with session_scope(url) as session:
            whole = board_of(task_view(session, task_id=task_id))
            page = served.board(session, task_id=task_id, limit=50)
        assert page.entries == whole.entries[:50], task_id
