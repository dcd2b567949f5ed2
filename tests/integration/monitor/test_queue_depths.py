"""Queue depths asked of the real Redis broker, and `evalq status` with no id."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from celery import Celery
from tests.support.pipeline import TASK, submission
from tests.support.processes import PATIENCE
from tests.support.settings import configure, pipeline_settings
from typer.testing import CliRunner

from evalq.producer.cli import app as cli
from evalq.service.client import Client
from evalq.workers.bootstrap import worker_app
from evalq.workers.depths import queue_depths, redis_queue_depths
from evalq.workers.embedded import embedded_worker
from evalq.workers.names import GRAPH_QUEUE, MERGE_QUEUE, QUEUES, TEXT_QUEUE


@pytest.fixture
def app(db_url: str, redis10_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Celery]:
    configure(monkeypatch, **pipeline_settings(db_url, redis10_url))
    app = worker_app()
    Client(app=app).put_task(TASK)
    yield app
    app.close()


def printed_depths(output: str) -> dict[str, int]:
    return {q: int(n) for q, n in re.findall(r"^(evalq\.\w+)\s+(\d+) waiting$", output, re.M)}


def test_depths_count_waiting_messages_per_queue_until_a_worker_drains_them(app: Celery) -> None:
    assert queue_depths(app) == dict.fromkeys(QUEUES, 0)
    client = Client(app=app)
    for sid in ("qd-1", "qd-2"):
        client.submit(submission(sid))
    # the chord's header is published (no judge is configured: tier 2 is stored as skipped and
    # never sent); its merge callback waits for the header to finish
    assert queue_depths(app) == dict.fromkeys(QUEUES, 0) | {TEXT_QUEUE: 2, GRAPH_QUEUE: 2}
    result = CliRunner().invoke(cli, ["status"])
    assert result.exit_code == 0, result.output
    assert printed_depths(result.output) == queue_depths(app)

    with embedded_worker(app, concurrency=4):
        assert client.wait(["qd-1", "qd-2"], timeout=120 * PATIENCE) == {
            "qd-1": "done",
            "qd-2": "done",
        }
        # drained; a debounced baseline refresh the worker holds (unacked, with an ETA) is not
        # waiting, so it is not counted
        assert queue_depths(app) == dict.fromkeys(QUEUES, 0)


def test_depths_include_every_priority_level(app: Celery) -> None:
    for priority in (0, 5, 9):  # kombu keeps each priority step in its own Redis list
        app.send_task("evalq.recover", queue=MERGE_QUEUE, priority=priority)
    assert redis_queue_depths(app.conf.broker_url)[MERGE_QUEUE] == 3


def test_status_without_a_broker_says_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALQ_BROKER_URL", raising=False)
    configure(monkeypatch)
    result = CliRunner().invoke(cli, ["status"])
    assert result.exit_code == 2
    assert "EVALQ_BROKER_URL is not set" in result.output
