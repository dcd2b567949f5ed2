"""A monitor's window, and /metrics' per-task score gauge that reads one per task, takes the
task's newest runs off an index and stops at the window's size: no sort of the whole task
(issue 44: /metrics took 27 s on tasks of 100k runs with no monitor defined)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from sqlalchemy import event
from tests.integration.store.test_standings import store_task

from evalq.read import monitors, served
from evalq.read.monitors import SCORE_WINDOW
from evalq.store.db import engine_for, session_scope

pytestmark = pytest.mark.both_databases  # the database matters here (tests/conftest.py)


def test_the_score_gauge_reads_each_task_s_newest_runs_off_the_index(tmp_path: Any) -> None:
    url = f"sqlite:///{tmp_path / 'window.db'}"
    from tests.support.databases import migrate_store

    migrate_store(url)
    rng = random.Random(44)
    for kind in ("arena", "peerread"):
        store_task(url, kind, f"{kind}-window", rng, SCORE_WINDOW * 3)
        with session_scope(url) as session:
            served.refresh_task(session, task_id=f"{kind}-window")
    executed: list[tuple[str, Any]] = []

    def seen(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_args: Any) -> None:
        executed.append((statement, parameters))

    engine = engine_for(url)
    event.listen(engine, "before_cursor_execute", seen)
    try:
        with session_scope(url) as session:
            scores = monitors.task_scores(session)
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    assert {s.task_id for s in scores} == {"arena-window", "peerread-window"}
    assert all(0 < s.runs <= SCORE_WINDOW for s in scores)
    windows = [(s, p) for s, p in executed if "ORDER BY submissions.created_at DESC" in s]
    assert len(windows) == 2  # one per task, whatever its size
    with engine.connect() as connection:
        for statement, parameters in windows:
            plan = " | ".join(
                str(row[-1])
                for row in connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters)
            )
            assert "ix_submissions_task_created" in plan, plan
            assert "TEMP B-TREE" not in plan, plan  # no sort of the task's runs
            assert "LIMIT" in statement.upper()
