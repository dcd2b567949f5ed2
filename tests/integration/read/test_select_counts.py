"""A read resolves its task, profile, baseline and evaluations once (issue 24, item 3).

The SELECTs a read issues are counted on the engine (SQLAlchemy's ``before_cursor_execute``):
a task's report reads no more than its leaderboard plus the rows only the report adds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.orm import Session

from evalq.read.leaderboard import leaderboard
from evalq.read.report_data import report_data
from evalq.store.db import session_scope

SCYLLA = "scylla-token-bucket"


@contextmanager
def counted(session: Session) -> Iterator[list[str]]:
    """The SELECT statements ``session``'s engine runs inside the block."""
    statements: list[str] = []

    def seen(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            statements.append(statement)

    engine = session.get_bind()
    event.listen(engine, "before_cursor_execute", seen)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", seen)


def selects(url: str, read: Callable[[Session], object]) -> list[str]:
    with session_scope(url) as session, counted(session) as statements:
        read(session)
    return statements


def test_a_scylla_report_reads_no_more_than_its_leaderboard_and_the_rows_it_adds(
    store: str,
) -> None:
    board = selects(store, lambda s: leaderboard(s, task_id=SCYLLA))
    report = selects(store, lambda s: report_data(s, task_id=SCYLLA))
    # the board, ranked in the database: the task, its baseline, its run tickets (one
    # statement: docs/scoring.md "Pre-registered runs"), its stored figures and version, the
    # page in its stored places, the listed runs, their imported scores (docs/importers.md);
    # the report reads the task's runs once for the rest (its comparison by variant, variant
    # analysis, runs and gates), and the board's entries come from those same rows: it adds
    # the view's own task, baseline and tickets, no more
    assert len(board) <= 8, board
    assert len(report) <= len(board) + 3, report


@pytest.mark.parametrize(
    "task_id", ["arena-frontend-dark-mode", "suite-refund-agent", "scylla-token-bucket"]
)
def test_a_report_reads_the_task_evaluations_once(store: str, task_id: str) -> None:
    report = selects(store, lambda s: report_data(s, task_id=task_id))
    evaluations = [s for s in report if "JOIN evaluations" in s and "submissions.payload" in s]
    assert len(evaluations) <= 1, report
