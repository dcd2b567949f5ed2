"""A real pipeline for integration tests: Redis broker and result backend, the store, the task."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from celery import Celery

from evalq.core.schemas import Task
from evalq.service.client import Client
from evalq.workers.bootstrap import worker_app
from tests.support.reviews import review_task, review_trace
from tests.support.settings import configure, pipeline_settings

TASK = Task.model_validate(review_task("review-1"))


def submission(sid: str, *, tokens: int = 1000, tool_calls: int = 4, time: float = 30.0) -> dict:
    """A reviewer run with an output, usage and a small two-agent trace."""
    return {
        "id": sid,
        "task_id": TASK.id,
        "tool": "claude-code",
        "model": "claude-sonnet-4",
        "usage": {
            "total_tokens": tokens,
            "tool_calls": tool_calls,
            "execution_time": time,
            "cost_usd": tokens / 100_000,
        },
        "output": "A sparse attention method for long documents, tested on summarisation; the "
        "baselines are weak and an ablation of the window size is missing.",
        "trace": review_trace(),
    }


@dataclass
class Pipeline:
    client: Client
    app: Celery
    db_url: str
    redis_url: str


@pytest.fixture
def pipeline(
    db_url: str, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[..., Pipeline]]:
    """Configure evalq for the test's store and Redis (extra settings as keywords), put the task.

    Tests start the worker themselves (``with embedded_worker(p.app): ...``), so they can also
    enqueue while no worker runs.
    """

    def make(**extra: str) -> Pipeline:
        configure(monkeypatch, **pipeline_settings(db_url, redis_url, **extra))
        app = worker_app()
        client = Client(app=app)
        client.put_task(TASK)
        apps.append(app)
        return Pipeline(client, app, db_url, redis_url)

    apps: list[Celery] = []
    yield make
    for app in apps:
        close_app(app)


def close_app(app: Celery) -> None:
    """Close the app's broker connection pools."""
    app.close()
