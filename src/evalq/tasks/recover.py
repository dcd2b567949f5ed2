"""The recovery sweep: the database is the source of truth, the broker only delivers.

A submission is re-enqueued for one of three reasons, each found differently:

- **lost**: one of its tiers is ``running`` on a worker whose heartbeat has expired
  (`evalq.workers.heartbeat`): the worker died with it, and re-enqueueing the whole submission
  also covers the sibling messages that worker had taken. Found once the tier was claimed
  ``lost_after`` ago (EVALQ_LOST_AFTER_S), minutes after the death instead of an hour.
- **orphaned**: a message of its current attempt sits in kombu's ``unacked`` hash, taken
  ``lost_after`` ago, and no live worker holds it (`evalq.workers.unacked`): a message the dead
  worker had reserved but not started, or a retry it was waiting to run.
- **stuck**: queued or running with no progress for ``older_than`` (EVALQ_STUCK_AFTER_S): the
  broker lost its messages (a flush), or something no rule above recognises.

Waiting work is none of these: a queued message is in a queue list, not in ``unacked``; a tier
running on a live worker has a live owner; so a backlog is left alone until the long age.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import timedelta

import redis
from celery import Celery, current_app, shared_task

from evalq.core.settings import get_settings
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.workers import heartbeat, unacked
from evalq.workers.chords import enqueue, parse_chord_id
from evalq.workers.names import RECOVER_TASK

logger = logging.getLogger(__name__)


def declare_queues(app: Celery) -> None:
    """(Re)declare evalq's queues and their exchange bindings on the broker.

    A flushed Redis broker loses kombu's binding tables too, and kombu then silently drops what
    is published to those exchanges; the sweep restores them before it re-enqueues.
    """
    with app.connection_for_write() as connection:
        channel = connection.default_channel
        for queue in app.amqp.queues.values():
            queue.bind(channel).declare()


def lost_submissions(client: redis.Redis, *, lost_after: timedelta) -> list[str]:
    """Submissions with a tier running on a worker that has no heartbeat any more."""
    with session_scope() as session:
        running = queries.running_tiers(session, older_than=lost_after)
    alive = heartbeat.alive_owners(client, (tier.owner for tier in running))
    return _unique(tier.submission_id for tier in running if tier.owner not in alive)


def orphaned_submissions(app: Celery, client: redis.Redis, *, lost_after: timedelta) -> list[str]:
    """Submissions whose current attempt has a message taken by a worker that no longer has it."""
    task_ids = unacked.orphaned_task_ids(
        client, app, nodes=heartbeat.live_nodes(client), older_than_s=lost_after.total_seconds()
    )
    parsed = [found for task_id in task_ids if (found := parse_chord_id(task_id))]
    if not parsed:
        return []
    with session_scope() as session:
        current = queries.current_attempts(session, ids=[sid for sid, _ in parsed])
    # An older attempt's message is a leftover of a submission already re-enqueued.
    return _unique(sid for sid, attempt in parsed if current.get(sid) == attempt)


def recover(
    app: Celery,
    *,
    older_than: timedelta,
    lost_after: timedelta | None = None,
    limit: int = 1000,
) -> list[str]:
    """Re-enqueue lost, orphaned and stuck submissions (see the module docstring); their ids.

    Each gets a new attempt number, so its chord has fresh ids; tiers that already finished are
    not recomputed (their rows are final) and the merge is an upsert, so nothing is duplicated.
    Lost and orphaned work is only looked for on a Redis broker (where heartbeats live).
    """
    if lost_after is None:
        lost_after = timedelta(seconds=get_settings().lost_after_s)
    found: list[str] = []
    broker = app.conf.broker_url
    if heartbeat.is_redis_url(broker):
        with redis.Redis.from_url(broker) as client:
            lost = lost_submissions(client, lost_after=lost_after)
            orphaned = orphaned_submissions(app, client, lost_after=lost_after)
        if lost or orphaned:
            logger.warning("lost work of dead workers: %s; orphaned: %s", lost, orphaned)
        found += lost + orphaned
    with session_scope() as session:
        found += queries.stuck_submissions(session, older_than=older_than, limit=limit)
    ids = _unique(found)
    if not ids:
        return ids
    declare_queues(app)
    live = _live_owners(broker, ids)
    for submission_id in ids:
        with session_scope() as session:
            attempt = queries.begin_enqueue(session, submission_id=submission_id, live_owners=live)
            pending = queries.pending_tiers(session, ids=[submission_id], live_owners=live)
        enqueue(app, submission_id, attempt, pending[submission_id])
    return ids


def _live_owners(broker: str | None, ids: list[str]) -> set[str]:
    """The workers with a heartbeat among those running tiers of ``ids``: what they hold is not
    sent again (a lost submission's other tiers may be running fine elsewhere)."""
    if broker is None or not heartbeat.is_redis_url(broker):
        return set()
    with session_scope() as session:
        owners = queries.running_owners(session, ids=ids)
    with redis.Redis.from_url(broker) as client:
        return heartbeat.alive_owners(client, owners)


def _unique(ids: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(ids))


@shared_task(name=RECOVER_TASK)
def recover_stuck() -> int:
    """Beat entry: run the recovery sweep with the configured ages."""
    settings = get_settings()
    return len(recover(current_app, older_than=timedelta(seconds=settings.stuck_after_s)))
