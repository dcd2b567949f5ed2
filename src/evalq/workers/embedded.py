"""An in-process worker: the whole pipeline in one process (`evalq demo`, tests).

It runs the same tasks and the same chords as distributed workers; only the transport differs
(kombu's in-memory transport when no broker is configured). Tier 1's batches run in helper
processes that own the model (`evalq.workers.text_helpers`), so that they do not wait on the
merges and refreshes this interpreter runs; the worker's shutdown stops them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from celery import Celery
from celery._state import _set_task_join_will_block
from celery.exceptions import WorkerShutdown
from celery.worker import WorkController

from evalq.core.settings import get_settings
from evalq.workers import bootstrap, text_helpers
from evalq.workers.names import QUEUES, TEXT_QUEUE


class _Controller(WorkController):  # type: ignore[misc]
    """A WorkController that tells when its consumer is ready."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.started = threading.Event()
        super().__init__(*args, **kwargs)

    def on_consumer_ready(self, consumer: Any) -> None:
        self.started.set()


IO_THREADS = 4
"""Threads of the in-process worker beyond one per CPU: for the judge's calls, merges and
webhooks, which wait on I/O while tier 1 holds the CPUs."""


def embedded_concurrency(cpus: int | None = None) -> int:
    """The in-process worker's threads: one per CPU for tier 1 (which takes at most one per
    CPU at a time, `evalq.tasks.resources.text_capacity`) and `IO_THREADS` for the rest."""
    return (cpus or os.cpu_count() or 1) + IO_THREADS


@contextmanager
def embedded_worker(
    app: Celery,
    *,
    queues: tuple[str, ...] = QUEUES,
    concurrency: int | None = None,
    pool: str = "threads",
) -> Iterator[WorkController]:
    """Run a worker thread consuming ``queues`` for the duration of the block; ``concurrency``
    defaults to `embedded_concurrency`. Tier 1 (when ``queues`` has it) runs in
    `helper_count` helper processes, stopped with the worker."""
    with ExitStack() as stack:
        count = helper_count() if TEXT_QUEUE in queues else 0
        if count:
            stack.enter_context(text_helpers.running(count))
        yield stack.enter_context(_worker(app, queues, concurrency, pool))


def helper_count() -> int:
    """Tier-1 helper processes of the in-process worker: EVALQ_TEXT_HELPERS, at most one per
    tier-1 slot (`bootstrap.pool_children`), which is the default; 0 keeps tier 1 in the
    worker's threads."""
    slots = bootstrap.pool_children()
    wanted = get_settings().text_helpers
    return slots if wanted is None else min(wanted, slots)


@contextmanager
def _worker(
    app: Celery, queues: tuple[str, ...], concurrency: int | None, pool: str
) -> Iterator[WorkController]:
    app.finalize()
    app.set_current()
    app.set_default()
    worker = _Controller(
        app=app,
        queues=list(queues),
        concurrency=concurrency or embedded_concurrency(),
        pool=pool,
        loglevel="WARNING",
        without_heartbeat=True,
        without_mingle=True,
        without_gossip=True,
        hostname=f"evalq-embedded-{threading.get_ident()}@localhost",
    )
    thread = threading.Thread(target=worker.start, daemon=True, name="evalq-embedded-worker")
    thread.start()
    if not worker.started.wait(60):
        raise RuntimeError("the embedded worker did not start within 60 s")
    # The worker thread marks this process as "inside a task"; the caller's thread is not, so
    # it may wait on results (as celery.contrib.testing's worker does).
    _set_task_join_will_block(False)
    try:
        yield worker
    finally:
        _stop(worker, thread)


def _stop(worker: _Controller, thread: threading.Thread) -> None:
    """Stop the worker in its own thread and wait for it (warm: running tasks end first).

    A Celery worker's consumer and broker connection belong to its loop's thread. Stopped from
    another thread, the consumer's shutdown reads the reply to the loop's pending BRPOP while the
    loop may read it too; when the loop wins, the shutdown waits on a reply that never comes (a
    suite run hung 15 minutes there). So the stop is queued on the loop (`Consumer.call_soon`):
    it raises `WorkerShutdown` there, the worker's own `start` catches it and shuts down in that
    thread. Per worker, unlike `celery.worker.state.should_stop` (what Celery's own test worker
    sets), which would stop every worker of the process."""
    if thread.is_alive():
        worker.consumer.call_soon(_shut_down)
    thread.join(STOP_WAIT_S)
    if thread.is_alive():
        raise RuntimeError(f"the embedded worker did not stop within {STOP_WAIT_S:.0f} s")


STOP_WAIT_S = 600.0
"""How long a warm stop may wait for the tasks still running (a tier-1 batch under load)."""


def _shut_down() -> None:
    raise WorkerShutdown(0)
