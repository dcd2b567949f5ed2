"""Send a submission's chord to the broker, by task name (no tier code is imported here)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext

from celery import Celery, Signature, uuid
from kombu.exceptions import BatchPublishError, OperationalError
from kombu.messaging import Producer
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeout

from evalq.core.errors import BrokerUnavailable
from evalq.core.schemas import TIERS, Tier
from evalq.workers.app import EvalqCelery, ProducerRedisBackend
from evalq.workers.names import MERGE_TASK, REFRESH_TASK, ROUTES, TIER_TASKS

UNREACHABLE = (OperationalError, RedisConnectionError, RedisTimeout, ConnectionError, TimeoutError)
"""What publishing raises when the broker or the result store cannot be reached."""


def schedule_refresh(app: Celery, task_id: str, *, countdown: float = 0.0) -> None:
    """Send the scheduled refresh of a task that its claim stands for, by name
    (`evalq.tasks.merge.refresh_baseline` with ``spaced``), ``countdown`` seconds from now."""
    app.send_task(
        REFRESH_TASK,
        args=[task_id],
        kwargs={"spaced": True},
        countdown=countdown,
        queue=ROUTES[REFRESH_TASK]["queue"],
    )


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
    with unreachable_as_unavailable(), app.producer_or_acquire() as producer:
        _send_chord(app, producer, submission_id, attempt, tiers)
    return chord_ids(submission_id, attempt)["merge"]


def enqueue_many(app: Celery, jobs: Mapping[str, tuple[int, Sequence[Tier]]]) -> None:
    """Publish the chords of several stored submissions, ``{id: (attempt, tiers)}``, at once.

    Their chord sizes go to the result store in one pipeline, then every message to the broker
    in another, through one kombu producer (`EvalqCelery.publishing_batch`): two round trips
    for the whole batch instead of several per submission. The sizes are stored before any
    task is visible to a worker.

    Raises:
        BrokerUnavailable: the broker or the result store could not be reached. Some messages
            may have been delivered (a pipeline is not a transaction); sending the same attempt
            again is safe, as for a redelivered message (the chord ids are the same).
    """
    if not jobs:
        return
    if not isinstance(app, EvalqCelery):  # an app of the caller's: one publish at a time
        for submission_id, (attempt, tiers) in jobs.items():
            enqueue(app, submission_id, attempt, tiers)
        return
    backend = app.backend
    sizes = backend.chord_sizes_batched() if isinstance(backend, ProducerRedisBackend) else None
    with (
        unreachable_as_unavailable(),
        app.publishing_batch() as producer,  # sent last: after the chord sizes, stored on
        sizes or nullcontext(),  # leaving this block, the innermost
    ):
        for submission_id, (attempt, tiers) in jobs.items():
            _send_chord(app, producer, submission_id, attempt, tiers)


def _send_chord(
    app: Celery, producer: Producer, submission_id: str, attempt: int, tiers: Sequence[Tier]
) -> None:
    """Publish chord(group(tiers), merge) with the attempt's ids: the merge alone when no tier
    runs (with the no markers a chord would pass it: ``([], id)``).

    The messages are those Celery's ``chord(group(...), merge).apply_async()`` sends (the same
    headers, the merge's signature embedded in each tier's message, the chord size stored
    first: `tests/unit/workers/test_chords.py` holds them equal), built straight from the ids
    with ``send_task``: Celery's canvas froze, cloned and copied signatures, groups and results
    for every chord, ~29 ms of a submission's 33 ms in a batch (bench/bookkeeping.py).
    """
    ids = chord_ids(submission_id, attempt)
    merge_queue = ROUTES[MERGE_TASK]["queue"]
    if not tiers:
        app.send_task(
            MERGE_TASK,
            args=([], submission_id),
            task_id=ids["merge"],
            root_id=ids["merge"],
            queue=merge_queue,
            producer=producer,
        )
        return
    group_id = uuid()  # as Celery's: a chord sent again under the same ids is a new chord
    callback = Signature(
        MERGE_TASK,
        args=[submission_id],
        options={
            "task_id": ids["merge"],
            "queue": merge_queue,
            "group_id": group_id,
            "reply_to": app.thread_oid,
        },
        app=app,
    )
    backend = app.backend
    backend.set_chord_size(group_id, len(tiers))
    backend.apply_chord((group_id, [app.AsyncResult(ids[tier]) for tier in tiers]), callback)
    embedded = dict(callback)  # a plain dict: serialised without the signature's own methods
    for index, tier in enumerate(tiers):
        app.send_task(
            TIER_TASKS[tier],
            args=(submission_id,),
            task_id=ids[tier],
            root_id=ids[tier],
            queue=ROUTES[TIER_TASKS[tier]]["queue"],
            group_id=group_id,
            group_index=index,
            chord=embedded,
            producer=producer,
        )


@contextmanager
def unreachable_as_unavailable() -> Iterator[None]:
    """Turn what publishing raises on an unreachable broker or result store into
    `BrokerUnavailable`, with a reason that leaves the URL out."""
    try:
        yield
    except UNREACHABLE as error:
        raise BrokerUnavailable(_reason(error)) from None
    except (RuntimeError, BatchPublishError) as error:  # a result consumer gave up; a batch failed
        if not isinstance(error.__cause__, UNREACHABLE):
            raise
        raise BrokerUnavailable(_reason(error.__cause__)) from None


def _reason(error: BaseException) -> str:
    """One line naming the failure, without the URL (it may hold credentials)."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text[:200]
