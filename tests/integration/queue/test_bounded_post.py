"""A slow or huge webhook receiver costs one attempt its deadline and a few KiB, nothing more:
real receivers on 127.0.0.1 that trickle their answer a byte a second, stream a 1 GiB body
(generated as it is written) or send header lines that never end; then the same trickling
receiver against real `evalq worker` processes on the prefork and the threads pool."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tests.support.pipeline import Pipeline
from tests.support.processes import process_env, start, stop, wait_until
from tests.support.webhook_receiver import TEST_WEBHOOK_KEY, hostile_receiver

from evalq.core.settings import Settings
from evalq.store.webhooks import Delivery, new_secret
from evalq.tasks.webhooks import post_event

pytestmark = pytest.mark.both_databases  # the database matters here (tests/conftest.py)


GIB = 1024**3
DEADLINE_S = 2.0
TRICKLE_S = 1.0  # the 44-byte answer would take 44 s: twenty times the deadline


def _settings() -> Settings:
    return Settings(
        webhook_timeout_s=DEADLINE_S, webhook_allow_private=True, webhook_max_answer_bytes=8192
    )


def _delivery(url: str) -> Delivery:
    return Delivery("msg_bounded", url, new_secret(), 0, datetime.now(UTC))


BODY = json.dumps({"type": "evaluation.completed", "data": {"id": "s1"}})


def test_a_trickled_answer_fails_the_attempt_at_its_total_deadline() -> None:
    with hostile_receiver(trickle_s=TRICKLE_S) as receiver:
        attempt = post_event(_delivery(receiver.url), BODY, attempt=1, settings=_settings())
        assert receiver.done.wait(30)
    assert attempt.status_code is None
    assert attempt.error == f"DeadlinePassed: no complete answer within {DEADLINE_S:g} s"
    # each byte came within the per-read timeouts of an HTTP client; only a total deadline
    # stops it: the receiver had sent a few bytes of its 44 when the client hung up
    assert receiver.hung_up and 0 < receiver.sent < 44


def test_a_gigabyte_body_is_never_read() -> None:
    with hostile_receiver(body_bytes=GIB) as receiver:
        tracemalloc.start()
        try:
            attempt = post_event(_delivery(receiver.url), BODY, attempt=1, settings=_settings())
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert receiver.done.wait(60)
    assert attempt.status_code == 200 and attempt.error is None  # the status is the answer
    assert peak < 512 * 1024, peak  # a few KiB read, not the body
    # the connection was closed after the head: the receiver could write no more than what
    # the loopback's socket buffers hold, far from its gigabyte
    assert receiver.hung_up and receiver.sent < 64 * 1024 * 1024, receiver.sent


def test_an_endless_head_fails_the_attempt_after_the_bytes_read() -> None:
    with hostile_receiver(head_bytes=GIB) as receiver:
        attempt = post_event(_delivery(receiver.url), BODY, attempt=1, settings=_settings())
        assert receiver.done.wait(60)
    assert attempt.status_code is None
    assert attempt.error == "AnswerTooLarge: the answer's head is longer than 8192 bytes"
    assert receiver.hung_up and receiver.sent < 64 * 1024 * 1024


@pytest.mark.parametrize("pool", ["prefork", "threads"])
def test_every_pool_holds_a_delivery_to_its_deadline(
    pool: str, pipeline: Callable[..., Pipeline], tmp_path: Path
) -> None:
    """A real `evalq worker` on the webhooks queue: a run merged at intake (nothing to fan
    out) sends its event to a receiver that trickles; the one attempt fails at the deadline."""
    settings = {
        "webhook_key": TEST_WEBHOOK_KEY,
        "webhook_allow_private": "true",
        "webhook_timeout_s": str(DEADLINE_S),
        "webhook_max_attempts": "1",
    }
    p = pipeline(**settings)
    p.client.put_task({"id": "bare", "category": "debugging"})
    with hostile_receiver(trickle_s=TRICKLE_S) as receiver:
        hook = p.client.add_webhook("bare", {"url": receiver.url})
        env = process_env(
            {"database_url": p.db_url, "broker_url": p.redis_url, **settings}, drop=("EVALQ_",)
        )
        worker = start(
            ["worker", "--queues", "evalq.webhooks", "--pool", pool, "--concurrency", "2"],
            env=env,
            log=tmp_path / "worker.log",
        )
        try:
            run = {"id": "b1", "task_id": "bare", "tool": "t", "model": "m", "output": "ok"}
            p.client.submit(run | {"usage": {"total_tokens": 10}})

            def failed() -> bool:
                found = p.client.webhook_deliveries("bare", hook.id)
                return bool(found) and found[0].status == "failed"

            wait_until(failed, timeout=120, what="the delivery to fail at its deadline")
            # the receiver learns of the hang-up at its next byte (one a TRICKLE_S): wait for
            # it while the worker still runs (a socket left open until the worker stops fails)
            wait_until(lambda: receiver.hung_up, timeout=10 * TRICKLE_S, what="the hang-up")
        finally:
            stop(worker)
    [delivery] = p.client.webhook_deliveries("bare", hook.id)
    assert delivery.attempts == 1 and delivery.last_status_code is None
    assert delivery.last_error == f"DeadlinePassed: no complete answer within {DEADLINE_S:g} s"
    assert receiver.hung_up and receiver.sent < 44
