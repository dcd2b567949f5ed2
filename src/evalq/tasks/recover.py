"""The recovery sweep: the database is the source of truth, the broker only delivers."""

from __future__ import annotations

from datetime import timedelta

from celery import Celery, current_app, shared_task

from evalq.store import queries
from evalq.store.db import session_scope
from evalq.workers.chords import enqueue
from evalq.workers.names import RECOVER_TASK


def declare_queues(app: Celery) -> None:
    """(Re)declare evalq's queues and their exchange bindings on the broker.

    A flushed Redis broker loses kombu's binding tables too, and kombu then silently drops what
    is published to those exchanges; the sweep restores them before it re-enqueues.
    """
    with app.connection_for_write() as connection:
        channel = connection.default_channel
        for queue in app.amqp.queues.values():
            queue.bind(channel).declare()


def recover(app: Celery, *, older_than: timedelta, limit: int = 1000) -> list[str]:
    """Re-enqueue submissions stuck in queued/running for longer than ``older_than``.

    Each gets a new attempt number, so its chord has fresh ids; tiers that already finished are
    not recomputed (their rows are final) and the merge is an upsert, so nothing is duplicated.
    """
    with session_scope() as session:
        stuck = queries.stuck_submissions(session, older_than=older_than, limit=limit)
    if stuck:
        declare_queues(app)
    for submission_id in stuck:
        with session_scope() as session:
            attempt = queries.begin_enqueue(session, submission_id=submission_id)
        enqueue(app, submission_id, attempt)
    return stuck


@shared_task(name=RECOVER_TASK)
def recover_stuck() -> int:
    """Beat entry: run the recovery sweep with the configured timeout."""
    from evalq.core.settings import get_settings

    older = timedelta(seconds=get_settings().stuck_after_s)
    return len(recover(current_app, older_than=older))
