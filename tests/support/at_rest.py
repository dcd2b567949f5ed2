"""Stores handed over at rest: no refresh pending, every board's stored figures current.

A test that compares two reads of a store (a whole board and its pages, a door and another)
must not race a refresh: on a busy machine the debounced refresh a merge asked for can land
between the two reads, and the reads then differ in what the refresh changes (issue 43). A
fixture that evaluates runs stops its worker first, then calls `settle`, which refreshes every
task in the caller's thread and checks that nothing is left to draw. A fixture whose server
evaluates what it receives itself (an `evalq api` without a broker) cannot stop that worker:
it calls `wait_at_rest`, which waits for the refreshes the merges scheduled to have run.
"""

from __future__ import annotations

import time

from sqlalchemy import select

from evalq.core.settings import get_settings
from evalq.read.leaderboard import current_figures
from evalq.read.served import refresh_task
from evalq.read.view import task_context
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.store.models import SubmissionRow, TaskRow
from tests.support.processes import PATIENCE


def settle(url: str) -> None:
    """Refresh every task of the store at ``url`` (no worker may be running on it) and check
    that each board's stored figures are current afterwards.

    Raises:
        AssertionError: a task's figures are still not current (something else writes to the
            store: a worker left running).
    """
    settings = get_settings()
    with session_scope(url) as session:
        tasks = list(session.scalars(select(TaskRow.id).order_by(TaskRow.id)))
    for task_id in tasks:
        with session_scope(url) as session:
            queries.release_refresh(session, task_id=task_id)  # one a stopped worker never ran
            refresh_task(session, task_id=task_id, settings=settings)
    with session_scope(url) as session:
        stale = [
            task_id
            for task_id in tasks
            if current_figures(session, task_context(session, task_id=task_id, settings=settings))
            is None
        ]
    assert not stale, f"tasks whose board figures are not current after a refresh: {stale}"


def wait_at_rest(url: str, *, timeout: float = 120 * PATIENCE) -> None:
    """Wait until every task of the store at ``url`` that holds a run has no refresh scheduled
    and its board's stored figures are current: the debounced refresh its last merge asked for
    has run (a server's in-process worker draws it a debounce interval after the merge; until
    then an Arena board ranks runs scored against the baseline their merge saw).

    Raises:
        AssertionError: some task is still not at rest after ``timeout`` seconds (named).
    """
    settings = get_settings()
    deadline = time.monotonic() + timeout
    while True:
        with session_scope(url) as session:
            tasks = list(
                session.scalars(
                    select(TaskRow.id)
                    .where(TaskRow.id.in_(select(SubmissionRow.task_id)))
                    .order_by(TaskRow.id)
                )
            )
            scheduled = set(
                session.scalars(select(TaskRow.id).where(TaskRow.refresh_scheduled.is_(True)))
            )
            moving = [
                task_id
                for task_id in tasks
                if task_id in scheduled
                or current_figures(
                    session, task_context(session, task_id=task_id, settings=settings)
                )
                is None
            ]
        if not moving:
            return
        assert time.monotonic() < deadline, f"not at rest after {timeout:.0f} s: {moving}"
        time.sleep(0.2)
