"""Messages a dead worker took: in kombu's Redis ``unacked`` hash and held by no live worker.

With ``acks_late`` a message a worker has taken (running, reserved, or waiting for its retry
countdown) stays in the ``unacked`` hash, indexed by delivery time in ``unacked_index``, until the
worker acknowledges it; if the worker dies, kombu restores it only after the visibility timeout
(an hour by default). The hash does not say which worker took a message, so a message is orphaned
when every live worker was asked (`celery inspect query_task`) and none holds it.
"""

from __future__ import annotations

import json
import logging
import time

import redis
from celery import Celery

logger = logging.getLogger(__name__)

UNACKED_KEY = "unacked"
UNACKED_INDEX_KEY = "unacked_index"
"""kombu's key names (evalq does not change them in its transport options)."""

QUERY_TIMEOUT_S = 2.0
"""How long the sweep waits for workers' replies: a busy prefork worker answers from its main
process in milliseconds; one that does not answer in time makes the sweep skip this check."""


def unacked_task_ids(client: redis.Redis, *, older_than_s: float) -> dict[str, str]:
    """Task id of each message taken more than ``older_than_s`` ago and not acknowledged, by tag."""
    cutoff = time.time() - older_than_s
    tags = [_text(tag) for tag in client.zrangebyscore(UNACKED_INDEX_KEY, "-inf", cutoff)]
    if not tags:
        return {}
    found: dict[str, str] = {}
    for tag, raw in zip(tags, client.hmget(UNACKED_KEY, tags), strict=True):
        task_id = _task_id(raw)
        if task_id is not None:
            found[tag] = task_id
    return found


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _task_id(raw: bytes | str | None) -> str | None:
    """The Celery task id in one ``unacked`` entry (``[message, exchange, routing key]``)."""
    if raw is None:
        return None
    try:
        message = json.loads(raw)[0]
        task_id = message["headers"]["id"]
    except (ValueError, LookupError, TypeError):
        return None
    return task_id if isinstance(task_id, str) else None


def held_task_ids(app: Celery, task_ids: list[str], *, nodes: set[str]) -> set[str] | None:
    """Those of ``task_ids`` some worker holds (active, reserved or scheduled).

    None when one of ``nodes`` (the workers with a heartbeat) did not answer: then nothing can be
    called orphaned this time. Workers without a heartbeat are asked too; what they hold counts.
    """
    replies = app.control.inspect(timeout=QUERY_TIMEOUT_S).query_task(*task_ids) or {}
    if silent := nodes - set(replies):
        logger.info("no orphan check this time: no answer from %s", sorted(silent))
        return None
    return {task_id for reply in replies.values() for task_id in (reply or {})}


def orphaned_task_ids(
    client: redis.Redis, app: Celery, *, nodes: set[str], older_than_s: float
) -> list[str]:
    """Ids of tasks taken more than ``older_than_s`` ago by a worker that no longer holds them.

    The ``unacked`` hash is read before and after the workers are asked: a message acknowledged
    meanwhile (its task just finished) is gone from the second read and is not orphaned.
    """
    before = unacked_task_ids(client, older_than_s=older_than_s)
    if not before:
        return []
    held = held_task_ids(app, sorted(set(before.values())), nodes=nodes)
    if held is None:
        return []
    after = unacked_task_ids(client, older_than_s=older_than_s)
    return sorted({task_id for tag, task_id in before.items() if tag in after} - held)
