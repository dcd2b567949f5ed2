"""A refresh a merge schedules is spaced by the cost of the task's last refresh: the refreshes of
a task that keeps receiving runs take at most EVALQ_BASELINE_REFRESH_SHARE of the time instead
of running back to back (issue 44: a live 100k Scylla task refreshed without pause and was
~45% of the pipeline's bookkeeping). A refresh asked for by hand runs at once. Real queue."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from tests.support.pipeline import TASK, Pipeline, submission
from tests.support.processes import PATIENCE

from evalq.store import queries
from evalq.store.db import session_scope
from evalq.store.models import TaskRefreshRow, TaskRow, utcnow
from evalq.tasks.merge import refresh_baseline
from evalq.workers.embedded import embedded_worker

pytestmark = [pytest.mark.integration, pytest.mark.both_databases]

COST_S = 3.0
"""How long the task's last refresh is said to have taken: at a share of 1/4 the next scheduled
one starts three times that after it ended."""


def kept(url: str) -> tuple[float | None, datetime | None, bool]:
    """The task's last refresh (its cost, when it ended) and whether one is scheduled."""
    with session_scope(url) as session:
        row = session.get(TaskRefreshRow, TASK.id)
        task = session.get(TaskRow, TASK.id)
        assert task is not None
        if row is None or row.ended_at is None:
            return None, None, task.refresh_scheduled
        ended = row.ended_at if row.ended_at.tzinfo else row.ended_at.replace(tzinfo=UTC)
        return row.cost_s, ended, task.refresh_scheduled


def until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 120 * PATIENCE
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.2)


def test_a_scheduled_refresh_starts_no_sooner_than_its_share_allows(
    pipeline: Callable[..., Pipeline],
) -> None:
    p = pipeline(baseline_refresh_debounce_s="0.2")
    with embedded_worker(p.app, concurrency=2):
        p.client.submit(submission("first", tokens=1000, time=30.0))
        assert p.client.wait(["first"], timeout=240 * PATIENCE) == {"first": "done"}
        until(lambda: kept(p.db_url)[1] is not None and not kept(p.db_url)[2])  # refreshed
        # the last refresh took COST_S (as one of a large task does): the next waits 3 x that
        ended = utcnow()
        with session_scope(p.db_url) as session:
            queries.note_refresh(session, task_id=TASK.id, cost_s=COST_S, ended_at=ended)
        p.client.submit(submission("second", tokens=2000, time=60.0))
        assert p.client.wait(["second"], timeout=240 * PATIENCE) == {"second": "done"}
        until(lambda: (kept(p.db_url)[1] or ended) > ended)  # the next refresh has run
    cost, then, scheduled = kept(p.db_url)
    assert cost is not None and then is not None and not scheduled
    assert then - timedelta(seconds=cost) >= ended + timedelta(seconds=3 * COST_S)


def test_a_refresh_asked_for_runs_at_once_whatever_the_last_one_cost(
    pipeline: Callable[..., Pipeline],
) -> None:
    p = pipeline()
    with embedded_worker(p.app, concurrency=2):
        p.client.submit(submission("only", tokens=1000, time=30.0))
        assert p.client.wait(["only"], timeout=240 * PATIENCE) == {"only": "done"}
    with session_scope(p.db_url) as session:
        queries.note_refresh(session, task_id=TASK.id, cost_s=3600.0, ended_at=utcnow())
    assert isinstance(refresh_baseline(TASK.id), int)
    assert kept(p.db_url)[0] != 3600.0  # it ran, and kept its own cost
