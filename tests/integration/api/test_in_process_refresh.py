"""With no broker, `evalq api` evaluates in its own process, and the refresh a merge scheduled
waits in that process (its debounce, and now its spacing: at 100,000 runs, minutes). A server
killed meanwhile left the task's claim set, so no later merge scheduled a refresh again: the
restarted server sends the refresh of every claimed task again (`tasks.merge.resend_refreshes`)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select, update

from evalq.store.db import session_scope
from evalq.store.models import TaskRefreshRow, TaskRow
from tests.integration.api.conftest import evaluate_examples, examples, serve_api
from tests.support.processes import wait_until


def claimed(url: str, task_id: str) -> bool:
    with session_scope(url) as session:
        return bool(session.scalar(select(TaskRow.refresh_scheduled).where(TaskRow.id == task_id)))


def refreshes_ended(url: str, task_id: str) -> object:
    with session_scope(url) as session:
        return session.scalar(
            select(TaskRefreshRow.ended_at).where(TaskRefreshRow.task_id == task_id)
        )


def test_a_refresh_left_waiting_by_a_killed_server_is_sent_again_at_its_start(
    tmp_path: Path,
) -> None:
    run = examples("arena")[0]
    task_id = run["task_id"]
    with serve_api("sqlite", tmp_path, broker=False) as server:
        assert evaluate_examples(server, [run]) == {run["id"]: "done"}
        before = refreshes_ended(server.db_url, task_id)
        assert before is not None and not claimed(server.db_url, task_id)
        # a merge's refresh scheduled, then the server killed while it waited
        with session_scope(server.db_url) as session:
            session.execute(
                update(TaskRow).where(TaskRow.id == task_id).values(refresh_scheduled=True)
            )
        server.restart(kill=True)
        wait_until(
            lambda: (
                not claimed(server.db_url, task_id)
                and refreshes_ended(server.db_url, task_id) != before
            ),
            timeout=120,
            what="the refresh claimed before the restart",
        )
