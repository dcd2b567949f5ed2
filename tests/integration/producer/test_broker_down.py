"""A submit while the broker is down: refused at once, stored, and enqueued by a re-send."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from tests.support.databases import fresh_database
from tests.support.redis_server import RedisServer
from tests.support.settings import configure
from typer.testing import CliRunner

from evalq.core.errors import BrokerUnavailable
from evalq.core.settings import Settings
from evalq.producer.cli import app
from evalq.service.client import Client
from evalq.store.db import session_scope
from evalq.store.models import SubmissionRow

pytestmark = pytest.mark.both_databases  # the database matters here (tests/conftest.py)

# Reference outputs: tier 1 applies, so a submission needs the broker (one with nothing to fan
# out is evaluated as it is stored, broker or not: tests/integration/queue/test_skipped_tiers.py).
TASK = {"id": "t1", "category": "debugging", "reference_outputs": ["A careful fix."]}


def run(sid: str) -> dict[str, Any]:
    """A small valid submission."""
    usage = {"input_tokens": 10, "output_tokens": 5, "tool_calls": 1, "execution_time": 1.0}
    return {"id": sid, "task_id": "t1", "tool": "aider", "model": "gpt-4o", "usage": usage}


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with fresh_database(request.param, tmp_path) as url:
        yield url


def enqueue_counts(url: str) -> dict[str, tuple[str, int]]:
    with session_scope(url) as session:
        rows = session.execute(
            select(SubmissionRow.id, SubmissionRow.status, SubmissionRow.enqueue_count)
        )
        return {row.id: (row.status, row.enqueue_count) for row in rows}


def test_a_resend_enqueues_what_the_broker_never_got(broker: RedisServer, store: str) -> None:
    client = Client(Settings(database_url=store, broker_url=broker.url))
    client.put_task(TASK)
    broker.stop()

    started = time.monotonic()
    with pytest.raises(BrokerUnavailable) as caught:
        client.submit_many([run("r1"), run("r2")])
    refused_after = time.monotonic() - started
    print(f"refused after {refused_after:.2f} s")  # was 19 s: Celery's 20 result-store retries
    assert caught.value.unsent == ["r1", "r2"]
    assert "send them again" in str(caught.value)
    assert enqueue_counts(store) == {"r1": ("queued", 0), "r2": ("queued", 0)}

    broker.start()
    assert [s.created for s in client.submit_many([run("r1"), run("r2")])] == [False, False]
    assert enqueue_counts(store) == {"r1": ("queued", 1), "r2": ("queued", 1)}
    assert broker.waiting() == 2  # one message each (tier 1; no trace, no judge)

    client.submit(run("r1"))  # sent before: a re-send does not enqueue it again
    assert broker.waiting() == 2
    client.app.close()


def test_the_cli_names_the_broker_in_one_line(
    broker: RedisServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    configure(monkeypatch, database_url=url, broker_url=broker.url)
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps([TASK]))
    assert CliRunner().invoke(app, ["task", "put", str(tasks)]).exit_code == 0
    broker.stop()
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps(run("r1")) + "\n")

    result = CliRunner().invoke(app, ["submit", str(runs), "--no-wait"])

    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("error: the broker is unavailable (")
    assert "send them again" in lines[0]
    assert enqueue_counts(url) == {"r1": ("queued", 0)}
