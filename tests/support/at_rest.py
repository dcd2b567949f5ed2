"""Stores handed over at rest: no refresh pending, every board's stored figures current.

A test that compares two reads of a store (a whole board and its pages, a door and another)
must not race a refresh: on a busy machine the debounced refresh a merge asked for can land
between the two reads, and the reads then differ in what the refresh changes (issue 43). A
fixture that evaluates runs stops its worker first, then calls `settle`, which refreshes every
task in the caller's thread and checks that nothing is left to draw.
"""

from __future__ import annotations

from sqlalchemy import select

from evalq.core.settings import get_settings
from evalq.read.leaderboard import current_figures
from evalq.read.served import refresh_task
from evalq.read.view import task_context
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.store.models import TaskRow


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
