"""The recovery sweep: the database is the source of truth, the broker only delivers.

A submission is re-enqueued for one of three reasons, each found differently:

- **lost**: one of its tiers is ``running`` on a worker whose heartbeat has expired
  (`evalq.workers.heartbeat`): the worker died with it, and re-enqueueing the whole submission
  also covers the sibling messages that worker had taken. Found once the tier was claimed
  ``lost_after`` ago (EVALQ_LOST_AFTER_S), minutes after the death instead of an hour.
- **orphaned**: a message of its current attempt sits in kombu's ``unacked`` hash, taken
  ``lost_after`` ago, and no live worker holds it (`evalq.workers.unacked`): a message the dead
  worker had reserved but not started, or a retry it was waiting to run.
- **dropped**: its rows have not changed for ``lost_after`` and a message it waits for is
  nowhere: in no queue list, and held (active, reserved or scheduled) by no worker. A broker
  restart does this: each worker cancels the tasks it was running and forgets the ones it had
  reserved ("cannot be acknowledged after a connection loss"), and their messages wait in
  ``unacked`` for the visibility timeout, or are gone if the broker stopped between handing a
  message out and recording it. Only what is missing is sent again, even a tier whose row still
  names a live worker as its owner (that worker no longer runs it).
- **stuck**: queued or running with no progress for ``older_than`` (EVALQ_STUCK_AFTER_S): the
  broker lost its messages (a flush), or something no rule above recognises.

Waiting work is none of these: a queued message is in a queue list, not in ``unacked``; a tier
running on a live worker has a live owner and is held by it; so a backlog is left alone until the
long age.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import timedelta

import redis
from celery import Celery, current_app, shared_task

from evalq.core.schemas import Tier
from evalq.core.settings import get_settings
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.workers import heartbeat, queued, redis_url, unacked
from evalq.workers.chords import chord_ids, enqueue, parse_chord_id
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


def dropped_submissions(
    app: Celery, client: redis.Redis, *, idle_after: timedelta
) -> dict[str, list[Tier]]:
    """Idle submissions waiting for a message no one has; for each, the tiers to send again
    (an empty list: the merge alone, every tier being final).

    Each message is looked for three times: held by a worker, waiting in a queue, held again
    (one taken from its queue between the first two looks is held by the third), and a
    submission whose rows changed meanwhile is left alone. None is found when a live worker does
    not answer, or when the queues hold more than `queued.SCAN_LIMIT` messages.
    """
    with session_scope() as session:
        idle = queries.idle_work(session, older_than=idle_after)
    if not idle:
        return {}
    wanted = sorted({task_id for work in idle for task_id in _task_ids(work)})
    nodes = heartbeat.live_nodes(client)
    held = unacked.held_task_ids(app, wanted, nodes=nodes) if wanted else set()
    waiting = None if held is None else queued.queued_task_ids(client, app.amqp.queues)
    if held is None or waiting is None:
        return {}
    rest = sorted(set(wanted) - held - waiting)
    held_now = unacked.held_task_ids(app, rest, nodes=nodes) if rest else set()
    if held_now is None:
        return {}
    found = held | waiting | held_now
    with session_scope() as session:
        unchanged = set(queries.idle_work(session, older_than=idle_after))
    dropped: dict[str, list[Tier]] = {}
    for work in idle:
        missing = _missing(work, found)
        if work in unchanged and missing is not None:
            dropped[work.submission_id] = missing
    return dropped


def _task_ids(work: queries.IdleWork) -> list[str]:
    """The ids, in every attempt so far, of the tasks ``work`` waits for."""
    parts: tuple[str, ...] = work.unfinished or ("merge",)
    return [
        chord_ids(work.submission_id, n)[part] for n in range(1, work.attempt + 1) for part in parts
    ]


def _missing(work: queries.IdleWork, found: set[str]) -> list[Tier] | None:
    """The unfinished tiers of ``work`` with no message in ``found`` ([] for a missing merge),
    or None when nothing is missing."""

    def present(part: str) -> bool:
        return any(
            chord_ids(work.submission_id, n)[part] in found for n in range(1, work.attempt + 1)
        )

    if not work.unfinished:
        return None if present("merge") else []
    missing = [tier for tier in work.unfinished if not present(tier)]
    return missing or None


def recover(
    app: Celery,
    *,
    older_than: timedelta,
    lost_after: timedelta | None = None,
    limit: int = 1000,
) -> list[str]:
    """Re-enqueue lost, orphaned, dropped and stuck submissions (see the module docstring).

    Each gets a new attempt number, so its chord has fresh ids; tiers that already finished are
    not recomputed (their rows are final) and the merge is an upsert, so nothing is duplicated.
    Lost, orphaned and dropped work is only looked for on a Redis broker (where heartbeats
    live); ``lost_after`` (EVALQ_LOST_AFTER_S) is the age of all three. Returns the ids.
    """
    if lost_after is None:
        lost_after = timedelta(seconds=get_settings().lost_after_s)
    found: list[str] = []
    dropped: dict[str, list[Tier]] = {}
    broker = app.conf.broker_url
    if heartbeat.is_redis_url(broker):
        with broker_client(app) as client:
            lost = lost_submissions(client, lost_after=lost_after)
            orphaned = orphaned_submissions(app, client, lost_after=lost_after)
            dropped = dropped_submissions(app, client, idle_after=lost_after)
        if lost or orphaned or dropped:
            logger.warning(
                "lost work of dead workers: %s; orphaned: %s; dropped: %s",
                lost,
                orphaned,
                sorted(dropped),
            )
        found += lost + orphaned + list(dropped)
    with session_scope() as session:
        found += queries.stuck_submissions(session, older_than=older_than, limit=limit)
    ids = _unique(found)
    if not ids:
        return ids
    declare_queues(app)
    live = _live_owners(app, ids)
    for submission_id in ids:
        with session_scope() as session:
            attempt = queries.begin_enqueue(session, submission_id=submission_id, live_owners=live)
            if submission_id in dropped:  # exactly what no worker has
                tiers = dropped[submission_id]
            else:
                pending = queries.pending_tiers(session, ids=[submission_id], live_owners=live)
                tiers = pending[submission_id]
        enqueue(app, submission_id, attempt, tiers)
    return ids


def broker_client(app: Celery) -> redis.Redis:
    """A client for ``app``'s Redis broker (its master, on a ``sentinel://`` URL)."""
    master_name = app.conf.broker_transport_options.get("master_name")
    return redis_url.redis_client(str(app.conf.broker_url), master_name=master_name)


def _live_owners(app: Celery, ids: list[str]) -> set[str]:
    """The workers with a heartbeat among those running tiers of ``ids``: what they hold is not
    sent again (a lost submission's other tiers may be running fine elsewhere)."""
    if not heartbeat.is_redis_url(app.conf.broker_url):
        return set()
    with session_scope() as session:
        owners = queries.running_owners(session, ids=ids)
    with broker_client(app) as client:
        return heartbeat.alive_owners(client, owners)


def _unique(ids: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(ids))


@shared_task(name=RECOVER_TASK)
def recover_stuck() -> int:
    """Beat entry: run the recovery sweep with the configured ages."""
    settings = get_settings()
    return len(recover(current_app, older_than=timedelta(seconds=settings.stuck_after_s)))
