"""Task ids waiting in evalq's queues: kombu's Redis lists, read without taking anything.

The recovery sweep reads them to tell a submission whose messages wait in a backlog from one
whose messages are nowhere (dropped while the broker restarted). Reading costs one transfer of
every waiting message, so the sweep only reads queues holding at most `SCAN_LIMIT` messages.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable

import redis

logger = logging.getLogger(__name__)

SCAN_LIMIT = 10_000
"""The most waiting messages read in one sweep (a few KB each); above it the check is skipped."""


def queued_task_ids(
    client: redis.Redis, queues: Iterable[str], *, limit: int = SCAN_LIMIT
) -> set[str] | None:
    """Task ids of every message waiting in ``queues``; None when they hold more than ``limit``."""
    names = sorted(set(queues))
    with client.pipeline(transaction=False) as pipe:
        for name in names:
            pipe.llen(name)
        lengths = pipe.execute()
    if (waiting := sum(lengths)) > limit:
        logger.info("queues not read this time: %d messages wait (more than %d)", waiting, limit)
        return None
    found: set[str] = set()
    for name in names:
        for raw in client.lrange(name, 0, -1):
            task_id = _task_id(raw)
            if task_id is not None:
                found.add(task_id)
    return found


def _task_id(raw: bytes | str) -> str | None:
    """The Celery task id of one waiting message (kombu's JSON envelope)."""
    try:
        task_id = json.loads(raw)["headers"]["id"]
    except (ValueError, LookupError, TypeError):
        return None
    return task_id if isinstance(task_id, str) else None
