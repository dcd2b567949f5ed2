"""Send a submission's chord to the broker, by task name (no tier code is imported here)."""

from __future__ import annotations

from collections.abc import Sequence

from celery import Celery, chord, group
from kombu.exceptions import OperationalError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeout

from evalq.core.errors import BrokerUnavailable
from evalq.core.schemas import TIERS, Tier
from evalq.workers.names import MERGE_TASK, ROUTES, TIER_TASKS

UNREACHABLE = (OperationalError, RedisConnectionError, RedisTimeout, ConnectionError, TimeoutError)
"""What publishing raises when the broker or the result store cannot be reached."""


def chord_ids(submission_id: str, attempt: int) -> dict[str, str]:
    """Deterministic task ids of one enqueue attempt, so a redelivery is recognisable."""
    ids: dict[str, str] = {tier: f"{submission_id}:{tier}:{attempt}" for tier in TIERS}
    ids["group"] = f"{submission_id}:group:{attempt}"
    ids["merge"] = f"{submission_id}:merge:{attempt}"
    return ids


def parse_chord_id(task_id: str) -> tuple[str, int] | None:
    """(submission id, attempt) of a tier or merge task id from `chord_ids`; None for others."""
    parts = task_id.rsplit(":", 2)
    if len(parts) != 3 or parts[1] not in (*TIERS, "merge") or not parts[2].isdigit():
        return None
    return parts[0], int(parts[2])


def enqueue(app: Celery, submission_id: str, attempt: int, tiers: Sequence[Tier] = TIERS) -> str:
    """Publish chord(group(tiers), merge) for a stored submission; returns the merge's id.

    ``tiers`` are those still to run (the others are stored as skipped or final); with none,
    the merge is sent on its own.

    Raises:
        BrokerUnavailable: the broker (or the result store, where the producer subscribes to
            the chord's result) could not be reached within the producer's connect timeout.
    """
    ids = chord_ids(submission_id, attempt)
    callback = app.signature(
        MERGE_TASK, args=[submission_id], task_id=ids["merge"], queue=ROUTES[MERGE_TASK]["queue"]
    )
    header = group(
        [
            app.signature(
                TIER_TASKS[tier],
                args=[submission_id],
                task_id=ids[tier],
                queue=ROUTES[TIER_TASKS[tier]]["queue"],
            )
            for tier in tiers
        ],
        task_id=ids["group"],
    )
    try:
        if tiers:
            chord(header, callback, app=app).apply_async()
        else:  # nothing to run: the merge alone, with the no markers a chord would pass it
            callback.clone(args=([],)).apply_async()  # prepended: ([], id)
    except UNREACHABLE as error:
        raise BrokerUnavailable(_reason(error)) from None
    except RuntimeError as error:  # Celery's result consumer gave up reconnecting
        if not isinstance(error.__cause__, UNREACHABLE):
            raise
        raise BrokerUnavailable(_reason(error.__cause__)) from None
    return ids["merge"]


def _reason(error: BaseException) -> str:
    """One line naming the failure, without the URL (it may hold credentials)."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text[:200]
