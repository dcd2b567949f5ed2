"""Chords published straight from their ids: Celery's messages, without Celery's canvas."""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Iterator
from types import FrameType
from typing import Any

import pytest
import redis
from celery import chord, group

from evalq.core.schemas import TIERS, Tier
from evalq.core.settings import Settings
from evalq.workers.app import make_app
from evalq.workers.chords import chord_ids, enqueue, enqueue_many
from evalq.workers.names import MERGE_TASK, QUEUES, ROUTES, TIER_TASKS

pytestmark = pytest.mark.both_databases  # the database matters here (tests/conftest.py)

VARYING = ("group", "group_id", "origin", "delivery_tag", "reply_to", "timelimit", "ignore_result")
"""Fields that differ between any two publishes: the chord's random group id, the sender, the
message's delivery tag and the producer's reply address. And two that depend on whether this
process has the tasks registered (an earlier test imported them): the time limits (``send_task``
copies the configured ones, which the worker applies anyway) and ``ignore_result`` (the canvas
copies the task's False; None, as ``send_task`` sends, makes the worker read the same False)."""


@pytest.fixture
def app(redis_url: str) -> Iterator[Any]:
    app = make_app(Settings(broker_url=redis_url, result_backend=redis_url), producer=True)
    yield app
    app.close()


def celery_chord(app: Any, submission_id: str, attempt: int, tiers: tuple[Tier, ...]) -> None:
    """The chord as Celery's canvas publishes it (what `enqueue` sent before issue 49)."""
    ids = chord_ids(submission_id, attempt)
    callback = app.signature(
        MERGE_TASK, args=[submission_id], task_id=ids["merge"], queue=ROUTES[MERGE_TASK]["queue"]
    )
    if not tiers:
        callback.clone(args=([],)).apply_async()
        return
    header = group(
        [
            app.signature(
                TIER_TASKS[tier],
                args=[submission_id],
                task_id=ids[tier],
                queue=ROUTES[TIER_TASKS[tier]]["queue"],
            )
            for tier in tiers
        ]
    )
    chord(header, callback, app=app).apply_async()


def drained(url: str) -> tuple[list[dict[str, Any]], list[bytes]]:
    """Every message in evalq's queues (decoded, varying fields blanked) and the chord sizes
    stored, then both emptied."""
    broker = redis.Redis.from_url(url)
    try:
        messages = []
        for queue in QUEUES:
            for raw in broker.lrange(queue, 0, -1):
                message = json.loads(raw)
                message["body"] = json.loads(base64.b64decode(message["body"]))
                messages.append(blank(message))
            broker.delete(queue)
        size_keys = broker.keys("celery-taskset-meta-*.s")
        sizes = sorted(broker.get(key) or b"" for key in size_keys)
        if size_keys:
            broker.delete(*size_keys)
        return sorted(messages, key=lambda m: m["headers"]["id"]), sizes
    finally:
        broker.close()


def blank(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "*" if k in VARYING else blank(v) for k, v in value.items()}
    if isinstance(value, list):
        return [blank(v) for v in value]
    return value


@pytest.mark.parametrize("tiers", [TIERS, ("text",), ("text", "graph"), ()])
def test_a_chord_is_sent_as_celerys_canvas_sends_it(
    app: Any, redis_url: str, tiers: tuple[Tier, ...]
) -> None:
    celery_chord(app, "s1", 2, tiers)
    expected = drained(redis_url)
    enqueue(app, "s1", 2, tiers)
    assert drained(redis_url) == expected
    enqueue_many(app, {"s1": (2, tiers)})
    assert drained(redis_url) == expected
    assert len(expected[0]) == max(1, len(tiers))


def test_each_tier_message_points_at_its_own_chord(app: Any, redis_url: str) -> None:
    # The chord's group id is what the result store counts the tiers under: one per chord, the
    # same in each of its messages and in the merge they carry, another for the next chord.
    enqueue_many(app, {"a": (1, TIERS), "b": (1, TIERS)})
    broker = redis.Redis.from_url(redis_url)
    try:
        groups: dict[str, set[str]] = {"a": set(), "b": set()}
        for queue in QUEUES:
            for raw in broker.lrange(queue, 0, -1):
                message = json.loads(raw)
                merge = json.loads(base64.b64decode(message["body"]))[2]["chord"]
                sid = merge["args"][0]
                groups[sid] |= {message["headers"]["group"], merge["options"]["group_id"]}
                size = broker.get(f"celery-taskset-meta-{message['headers']['group']}.s")
                assert size == b"3"
    finally:
        broker.close()
    assert len(groups["a"]) == len(groups["b"]) == 1
    assert groups["a"] != groups["b"]


def test_a_batch_of_chords_builds_no_canvas(app: Any, redis_url: str) -> None:
    # Celery's canvas built, froze and cloned signatures, groups and results for each chord:
    # ~29 ms of a submission's ~33 ms in a batch of 100 (issue 49). Counted as calls into
    # celery/canvas.py while a batch of 20 chords is published.
    enqueue_many(app, {"warm": (1, TIERS)})  # queues declared, producer pooled
    calls = 0

    def count(frame: FrameType, event: str, _: Any) -> None:
        nonlocal calls
        if event == "call" and frame.f_code.co_filename.endswith("celery/canvas.py"):
            calls += 1

    sys.setprofile(count)
    try:
        enqueue_many(app, {f"s{i}": (1, TIERS) for i in range(20)})
    finally:
        sys.setprofile(None)
    messages, sizes = drained(redis_url)
    assert len(messages) == 21 * 3 and sizes == [b"3"] * 21
    # one merge signature per chord (its __init__); Celery's canvas made ~3,000 calls
    assert calls <= 20 * 2, calls
