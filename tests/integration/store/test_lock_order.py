"""Transactions of a merge and a refresh on PostgreSQL take their row locks in an order that
never deadlocks, and a submission's transaction that the database ends anyway runs again.

A merge adds its runs to the task's tallies and then claims the next refresh on the task's row
(`queries.claim_refresh`), in one transaction. A refresh that wrote the task's row before it
counted the tallies again (stop 62 kept how far it had decided the copies there) waited on the
merge's tally rows while the merge waited on the task's row: PostgreSQL's deadlock detector then
aborted one, and on a busy CI machine a submission through the API answered 503. The refresh
now keeps that in a row of its own (`TaskRefreshRow`), a merge claims its tasks in the order
of their ids, and the intake's transaction, ended by the database for a concurrent one, runs
again (`in_transaction`) instead of answering 503.

PostgreSQL only: SQLite lets one writer at a time hold the whole store, so two transactions
never hold a lock each.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select, text, update
from sqlalchemy.orm import Session
from tests.support.databases import fresh_database

from evalq.core.schemas import Task, parse_submission, parse_task
from evalq.core.settings import get_settings
from evalq.producer.cli.demo import EXAMPLES
from evalq.read.baseline import current_baseline
from evalq.read.served import refresh_task
from evalq.service.evaluated import record_evaluation
from evalq.store import queries
from evalq.store.db import in_transaction, session_scope
from evalq.store.models import TaskRow, TaskTallyRow

pytestmark = pytest.mark.both_databases  # locks between transactions: the database is the test

TASK = "arena-frontend-dark-mode"


@pytest.fixture
def pg_url(tmp_path: Path) -> Iterator[str]:
    with fresh_database("postgresql", tmp_path) as url:
        yield url


def merge_runs(url: str, count: int) -> None:
    """``count`` runs of the task (an Arena example's content, each its own output and agent),
    each merged as the chord's merge does, claims included."""
    tasks = {t["id"]: t for t in json.loads((EXAMPLES / "tasks.json").read_text())}
    line = json.loads((EXAMPLES / "arena.jsonl").read_text().splitlines()[0])
    with session_scope(url) as session:
        queries.put_task(session, task=parse_task(tasks[TASK]), settings=get_settings())
    for index in range(count):
        run = line | {
            "id": f"locks-{index}",
            "task_id": TASK,
            "tool": f"tool-{index % 3}",
            "output": f"{line['output']} ({index})",
        }
        with session_scope(url) as session:
            queries.add_submission(session, submission=parse_submission(run), cost_usd=None)
        with session_scope(url) as session:
            job = queries.load_job(session, submission_id=run["id"])
            current = current_baseline(session, task_id=TASK, profile=job.profile)
            record_evaluation(session, job, {}, current)
    with session_scope(url) as session:  # as the refresh about to run does when it starts
        queries.release_refresh(session, task_id=TASK)


def waiting_on_a_lock(url: str) -> bool:
    with session_scope(url) as session:
        waiting = select(func.count()).select_from(text("pg_stat_activity"))
        return bool(
            session.scalar(
                waiting.where(
                    text("datname = current_database()"), text("wait_event_type = 'Lock'")
                )
            )
        )


def test_a_refresh_waiting_on_a_merges_tallies_lets_the_merge_claim_the_task(
    pg_url: str,
) -> None:
    merge_runs(pg_url, 6)
    failures: list[BaseException] = []

    def refresh() -> None:
        try:
            with session_scope(pg_url) as session:
                refresh_task(session, task_id=TASK, settings=get_settings())
        except BaseException as error:  # reported below
            failures.append(error)

    refreshing = threading.Thread(target=refresh)
    with session_scope(pg_url) as merge:
        # a merge under way: its runs added to the task's tallies, the refresh not yet claimed
        tallies = select(TaskTallyRow).where(TaskTallyRow.task_id == TASK).with_for_update()
        assert merge.execute(tallies).all()
        refreshing.start()
        while refreshing.is_alive() and not waiting_on_a_lock(pg_url):
            time.sleep(0.05)
        assert refreshing.is_alive(), f"the refresh did not wait on the merge's tallies: {failures}"
        # the merge ends by claiming the refresh on the task's row; the deadlock detector
        # (deadlock_timeout: 1 s) answers long before this limit when the refresh holds it
        merge.execute(text("SET LOCAL lock_timeout = '120s'"))
        assert queries.claim_refresh(merge, task_id=TASK)
    refreshing.join(300)
    assert not refreshing.is_alive()
    assert not failures, failures


def test_a_transaction_the_database_ends_for_a_deadlock_runs_again(pg_url: str) -> None:
    with session_scope(pg_url) as session:
        for task_id in ("first", "second"):
            queries.put_task(session, task=Task(id=task_id, category="debugging"))
    holds_second = threading.Event()
    attempts: list[int] = []

    def claim(session: Session, task_id: str) -> None:
        session.execute(update(TaskRow).where(TaskRow.id == task_id).values(kind="arena"))

    def work(session: Session) -> str:
        """The second task's row, then the first's: the other order than the transaction below."""
        attempts.append(1)
        if len(attempts) == 1:  # checked for a deadlock well after the other waits too
            session.execute(text("SET LOCAL deadlock_timeout = '5s'"))
        claim(session, "second")
        holds_second.set()
        claim(session, "first")
        return "stored"

    results: list[object] = []
    working = threading.Thread(target=lambda: results.append(run_caught(work, pg_url)))
    with session_scope(pg_url) as other:
        other.execute(text("SET LOCAL deadlock_timeout = '600s'"))  # never the one ended
        claim(other, "first")
        working.start()
        assert holds_second.wait(60)
        while working.is_alive() and not waiting_on_a_lock(pg_url):
            time.sleep(0.05)
        claim(other, "second")  # a deadlock: the database ends the work's transaction
    working.join(120)
    assert results == ["stored"]
    assert len(attempts) == 2


def run_caught(work: Callable[[Session], str], url: str) -> object:
    try:
        return in_transaction(work, url)
    except Exception as error:  # the test's assertion shows it
        return error
