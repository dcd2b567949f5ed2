"""The Celery app: queues, routing and the reliability settings of DESIGN.md.

Producers and workers build the same app from `Settings`; producers send tasks by name, so they
never import the tier code (and so never torch).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from celery import Celery
from kombu.entity import Queue

from evalq.core.settings import Settings, get_settings
from evalq.workers.names import MERGE_QUEUE, QUEUES, RECOVER_TASK, ROUTES
from evalq.workers.policy import longest_retry_countdown


def celery_config(settings: Settings) -> dict[str, Any]:
    """Celery configuration for ``settings``; raises ValueError on an unsafe visibility timeout."""
    floor = settings.task_time_limit_s + longest_retry_countdown(settings)
    if settings.visibility_timeout_s <= floor:
        raise ValueError(
            f"EVALQ_VISIBILITY_TIMEOUT_S={settings.visibility_timeout_s} must exceed the task time "
            f"limit plus the longest retry countdown ({floor} s), or a slow task is delivered twice"
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
    backend = settings.result_backend or ("cache+memory://" if embedded else settings.broker_url)
    return {
        "broker_url": broker,
        "result_backend": backend,
        "broker_transport_options": transport,
        "result_backend_transport_options": {"visibility_timeout": settings.visibility_timeout_s},
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
        "worker_send_task_events": True,
        "task_send_sent_event": True,
        "beat_schedule": {
            "evalq-recover": {"task": RECOVER_TASK, "schedule": settings.recover_every_s},
        },
    }


def make_app(settings: Settings | None = None) -> Celery:
    """A Celery app configured from ``settings`` (the process Settings by default)."""
    settings = settings or get_settings()
    app = Celery("evalq")
    app.conf.update(celery_config(settings))
    return app


@lru_cache(maxsize=1)
def get_app() -> Celery:
    """The process's Celery app (producer side: no tasks imported)."""
    return make_app()
