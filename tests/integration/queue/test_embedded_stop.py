"""The in-process worker stops in its own thread, on real Redis.

A Celery worker's broker connection belongs to its loop's thread. Stopped from the caller's
thread, the consumer's shutdown read the reply to the loop's pending BRPOP while the loop could
read it too; when the loop won, the shutdown waited forever (a CI run hung 15 minutes in
`kombu.transport.redis.Channel.close`). The test records which thread closes the broker
channels: the race's precondition, present on every stop of the old code.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pytest
from kombu.transport import redis as kombu_redis
from tests.support.pipeline import Pipeline, submission

from evalq.workers.embedded import embedded_worker
from evalq.workers.names import GRAPH_QUEUE, MERGE_QUEUE

pytestmark = pytest.mark.both_databases  # the module's rule; its tests use SQLite stores

QUEUES = (GRAPH_QUEUE, MERGE_QUEUE)  # no tier-1 helper processes: the stop is the subject


@pytest.fixture
def closing_threads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The names of the threads that close a Redis broker channel, in order."""
    names: list[str] = []
    close = kombu_redis.Channel.close

    def recorded(channel: kombu_redis.Channel) -> None:
        names.append(threading.current_thread().name)
        close(channel)

    monkeypatch.setattr(kombu_redis.Channel, "close", recorded)
    yield names


def test_the_worker_closes_its_broker_connection_in_its_own_thread(
    pipeline: Callable[..., Pipeline], closing_threads: list[str]
) -> None:
    p = pipeline()
    with embedded_worker(p.app, queues=QUEUES, concurrency=2) as worker:
        p.client.submit(submission("stop-1"))  # the loop consumes, then waits in BRPOP again
        assert worker.started.is_set()
        caller = threading.current_thread().name
    assert closing_threads, "the worker closed no broker channel"
    assert set(closing_threads) == {"evalq-embedded-worker"}, (caller, closing_threads)
