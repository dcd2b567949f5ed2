"""The Celery app: queues, routing and the reliability settings of docs/reliability.md.

Producers and workers build the same app from `Settings`; producers send tasks by name, so they
never import the tier code (and so never torch).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from functools import lru_cache
from typing import Any

from celery import Celery
from celery.backends.redis import RedisBackend, SentinelBackend
from celery.result import AsyncResult
from kombu.entity import Queue
from kombu.messaging import Producer

from evalq.core.settings import Settings, get_settings
from evalq.workers.names import (
    EVENT_SWEEP_TASK,
    EVENT_TASK,
    FINALISE_TRACES_TASK,
    MERGE_QUEUE,
    MONITOR_TASK,
    QUEUES,
    RECOVER_TASK,
    ROUTES,
    TICKET_SWEEP_TASK,
    WEBHOOK_TASK,
)
from evalq.workers.policy import (
    longest_retry_countdown,
    longest_webhook_wait,
    webhook_time_limit,
)
from evalq.workers.redis_url import is_sentinel_url, sentinel_options

PRODUCER_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.5,
    "interval_max": 0.5,
}
"""Publishing and result-store retries of a producer: one quick retry, then the broker is down."""


class ProducerRedisBackend(RedisBackend):  # type: ignore[misc]
    """The Redis result store as producers use it: for chords only, never to wait on a result.

    Producers read outcomes from the database, so publishing a task does not subscribe to its
    result channel (Celery's default for an asynchronous backend). That subscription is what
    turned a down broker into 19 s of reconnects, and its cleanup at exit into "Exception ignored
    in AsyncResult.__del__" tracebacks.
    """

    _batch = threading.local()  # the pipeline of `chord_sizes_batched`, per thread

    def on_task_call(self, producer: Any, task_id: str) -> dict[str, Any]:
        return {}

    def remove_pending_result(self, result: AsyncResult) -> AsyncResult:
        return result

    def add_pending_result(
        self, result: AsyncResult, weak: bool = False, start_drainer: bool = True
    ) -> AsyncResult:
        # Publishing a chord's header asks for its tasks' results (a promise for the group);
        # a producer never reads them. Subscribing cost a round trip per chord, and the
        # subscriptions, never ended, kept growing with every submission the API took.
        return result

    @contextmanager
    def chord_sizes_batched(self) -> Iterator[None]:
        """Buffer the chord sizes set inside the block; store them in one round trip at its end.

        Publishing a chord sets its size here (two commands) before its tasks are sent; a batch
        of chords (`evalq.workers.chords.enqueue_many`) sends them all at once, before the
        tasks that need them. Nothing is stored when the block raises.
        """
        pipeline = self.client.pipeline(transaction=False)
        self._batch.pipeline = pipeline
        try:
            yield
        finally:
            del self._batch.pipeline
        pipeline.execute()

    def set_chord_size(self, group_id: str, chord_size: int) -> None:
        pipeline = getattr(self._batch, "pipeline", None)
        if pipeline is None:
            super().set_chord_size(group_id, chord_size)
            return
        pipeline.delete(self.get_key_for_group(group_id, ".c"))
        pipeline.set(
            self.get_key_for_group(group_id, ".s"), chord_size, ex=self.chord_expires or None
        )


class ProducerSentinelBackend(ProducerRedisBackend, SentinelBackend):  # type: ignore[misc]
    """`ProducerRedisBackend` on a Sentinel group (``sentinel://``; the master found by name)."""


class EvalqCelery(Celery):  # type: ignore[misc]
    """Celery, whose publishing one thread can pin to one producer (`publishing_batch`).

    Celery publishes a chord's tasks through a producer it acquires itself (``apply_async``
    of a chord does not pass one on), so a kombu publish batch on a producer of our own would
    not see them; pinned, every publish of this thread goes through the batching producer.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._pinned = threading.local()

    def producer_or_acquire(self, producer: Producer | None = None) -> Any:
        pinned = getattr(self._pinned, "producer", None)
        if producer is None and pinned is not None:
            return nullcontext(pinned)
        return super().producer_or_acquire(producer)

    @contextmanager
    def publishing_batch(self) -> Iterator[Producer]:
        """Buffer every message this thread publishes in the block; send them at its end, in
        one round trip (kombu's ``Producer.batch``; immediate on a transport without it).

        Nothing is sent when the block raises. A failed send raises kombu's
        ``BatchPublishError``: some messages may have been delivered.
        """
        with super().producer_or_acquire() as producer, producer.batch():
            self._pinned.producer = producer
            try:
                yield producer
            finally:
                del self._pinned.producer


def result_backend_url(settings: Settings, *, producer: bool) -> str:
    """The result backend URL; a producer's Redis backend is `ProducerRedisBackend`."""
    broker = settings.broker_url or "memory://"
    embedded = broker.startswith("memory")
    backend = settings.result_backend or ("cache+memory://" if embedded else broker)
    if producer and backend.startswith(("redis://", "rediss://")):
        return f"{__name__}:ProducerRedisBackend+{backend}"
    if producer and is_sentinel_url(backend):
        return f"{__name__}:ProducerSentinelBackend+{backend}"
    return backend


def celery_config(settings: Settings, *, producer: bool = False) -> dict[str, Any]:
    """Celery configuration for ``settings``; raises ValueError on an unsafe visibility timeout.

    A ``producer`` app (the client, the CLI, the HTTP API) gives up on an unreachable broker
    within about ``EVALQ_BROKER_CONNECT_TIMEOUT_S`` so its caller can answer "unavailable" at once;
    workers keep Celery's patient reconnects.
    """
    floor = settings.task_time_limit_s + longest_retry_countdown(settings)
    if settings.visibility_timeout_s <= floor:
        raise ValueError(
            f"EVALQ_VISIBILITY_TIMEOUT_S={settings.visibility_timeout_s} must exceed the task time "
            f"limit plus the longest retry countdown ({floor} s), or a slow task is delivered twice"
        )
    if settings.visibility_timeout_s <= longest_webhook_wait(settings):
        raise ValueError(
            f"EVALQ_VISIBILITY_TIMEOUT_S={settings.visibility_timeout_s} must exceed the longest "
            f"webhook retry countdown plus EVALQ_WEBHOOK_TIMEOUT_S "
            f"({longest_webhook_wait(settings):g} s); lower EVALQ_WEBHOOK_BACKOFF_S or "
            "EVALQ_WEBHOOK_MAX_ATTEMPTS, or a waiting retry is delivered twice"
        )
    broker = settings.broker_url or "memory://"
    embedded = broker.startswith("memory")
    transport: dict[str, Any] = {"visibility_timeout": settings.visibility_timeout_s}
    if embedded:
        transport = {"polling_interval": settings.memory_poll_interval_s}
    else:
        transport |= {
            "unacked_restore_interval": settings.unacked_restore_interval_s,
            "unacked_restore_throttle": 1,
        }
    transport |= sentinel_options(broker, settings.redis_master_name)
    backend = result_backend_url(settings, producer=producer)
    backend_transport: dict[str, Any] = {"visibility_timeout": settings.visibility_timeout_s}
    backend_transport |= sentinel_options(
        settings.result_backend or broker, settings.redis_master_name
    )
    impatient: dict[str, Any] = {}
    if producer:
        backend_transport["retry_policy"] = PRODUCER_RETRY_POLICY
        impatient = {
            "broker_connection_timeout": settings.broker_connect_timeout_s,
            "redis_socket_connect_timeout": settings.broker_connect_timeout_s,
            "task_publish_retry_policy": PRODUCER_RETRY_POLICY,
        }
    return impatient | {
        "broker_url": broker,
        "result_backend": backend,
        "broker_transport_options": transport,
        "result_backend_transport_options": backend_transport,
        "broker_connection_retry_on_startup": True,
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        "result_accept_content": ["json"],
        "result_extended": True,
        # Longer than the slowest chord: tiers with all retries, then the merge.
        "result_expires": max(86_400, 4 * settings.visibility_timeout_s),
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "task_time_limit": settings.task_time_limit_s,
        "task_soft_time_limit": max(5, settings.task_time_limit_s - 30),
        "worker_proc_alive_timeout": 120.0,  # a tier-1 child loads its model before it reports
        "worker_cancel_long_running_tasks_on_connection_loss": True,
        "task_routes": ROUTES,
        "task_queues": [Queue(name) for name in QUEUES],
        "task_default_queue": MERGE_QUEUE,
        # Task events are work per task (three messages each) that only a monitor reads:
        # Flower turns the workers' on when it starts (`celery control enable_events`);
        # a task-sent event per message is the producer's, sent when monitoring asks for it.
        "worker_send_task_events": settings.task_events,
        "task_send_sent_event": settings.task_sent_events,
        "beat_schedule": {
            "evalq-recover": {"task": RECOVER_TASK, "schedule": settings.recover_every_s},
            "evalq-finalise-traces": {
                "task": FINALISE_TRACES_TASK,
                "schedule": settings.trace_sweep_every_s,
            },
            "evalq-monitors": {"task": MONITOR_TASK, "schedule": settings.monitor_every_s},
            "evalq-events": {"task": EVENT_SWEEP_TASK, "schedule": settings.event_sweep_every_s},
            "evalq-tickets": {
                "task": TICKET_SWEEP_TASK,
                "schedule": settings.ticket_sweep_every_s,
            },
        },
        # A delivery ends at its own deadline on every pool (`evalq.tasks.bounded_post`); where
        # the pool can enforce a time limit (prefork), this one backs it up.
        "task_annotations": {
            name: {
                "time_limit": webhook_time_limit(settings),
                "soft_time_limit": webhook_time_limit(settings) - 10,  # never above the hard
            }
            for name in (WEBHOOK_TASK, EVENT_TASK)
        },
    }


def make_app(settings: Settings | None = None, *, producer: bool = False) -> Celery:
    """A Celery app configured from ``settings`` (the process Settings by default)."""
    settings = settings or get_settings()
    app = EvalqCelery("evalq")
    app.conf.update(celery_config(settings, producer=producer))
    return app


@lru_cache(maxsize=1)
def get_app() -> Celery:
    """The process's Celery app (producer side: no tasks imported)."""
    return make_app()
