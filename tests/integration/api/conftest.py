"""A real `evalq api` process (uvicorn) on a free loopback port, over the test store and Redis."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from evalq.core.settings import get_settings
from evalq.producer.cli import EXAMPLES
from evalq.store.db import session_scope
from evalq.store.keys import ApiKeyRow, create_key
from evalq.store.models import (
    BaselineRow,
    EvaluationRow,
    SubmissionRow,
    TaskRow,
    TierResultRow,
    WebhookDeliveryRow,
    WebhookRow,
)
from tests.integration.conftest import REDIS_TEST_DB, configure
from tests.support.databases import fresh_database, private_redis
from tests.support.processes import free_port, process_env, start, stop, wait_for_http
from tests.support.settings import pipeline_settings
from tests.support.webhook_receiver import TEST_WEBHOOK_KEY

ROOT = Path(__file__).resolve().parents[3]
TABLES = (
    TaskRow,
    SubmissionRow,
    TierResultRow,
    EvaluationRow,
    BaselineRow,
    ApiKeyRow,
    WebhookRow,
    WebhookDeliveryRow,
)
TASK = {"id": "t1", "category": "debugging", "success_criteria": [{"type": "no_errors"}]}


def submission(sid: str, task_id: str = "t1", **changes: Any) -> dict[str, Any]:
    """A small valid submission."""
    return {
        "id": sid,
        "task_id": task_id,
        "tool": "aider",
        "model": "gpt-4o",
        "usage": {"input_tokens": 800, "output_tokens": 200, "tool_calls": 3, "execution_time": 12},
        "output": "Fixed the date parser and added a regression test.",
    } | changes


def examples(name: str) -> list[dict[str, Any]]:
    """The bundled example submissions of ``examples/NAME.jsonl``."""
    lines = (EXAMPLES / f"{name}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def example_task(task_id: str) -> dict[str, Any]:
    """One bundled task definition."""
    tasks: list[dict[str, Any]] = json.loads((EXAMPLES / "tasks.json").read_text())
    return next(t for t in tasks if t["id"] == task_id)


@dataclass
class Server:
    """A running API: its URL, one key per scope set, and the store it writes to."""

    url: str
    db_url: str
    redis_url: str
    keys: dict[str, str]
    process: subprocess.Popen[bytes]
    log: Path
    clients: list[httpx.Client] = field(default_factory=list)

    def client(self, key: str | None = "rw", **kwargs: Any) -> httpx.Client:
        """An httpx client sending the named key (None: no key)."""
        headers = {} if key is None else {"Authorization": f"Bearer {self.keys[key]}"}
        client = httpx.Client(base_url=self.url, headers=headers, timeout=30, **kwargs)
        self.clients.append(client)
        return client

    def counts(self) -> dict[str, int]:
        """Rows in every table, to show that a rejected request stored nothing."""
        with session_scope(self.db_url) as session:
            return {
                t.__tablename__: int(session.scalar(select(func.count()).select_from(t)) or 0)
                for t in TABLES
            }


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def api(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """`evalq api` on a free port over a fresh store, for every test of a module.

    Three keys (rw, read, write) exist and the task ``t1`` is defined; this process is configured
    for the same store and Redis (so tests can run an embedded worker). Tests share the server:
    each uses ids of its own. A module's ``API_SETTINGS`` (names without ``EVALQ_``) are added
    to both.
    """
    directory = tmp_path_factory.mktemp("api")
    with (
        fresh_database(request.param, directory) as db_url,
        private_redis(REDIS_TEST_DB) as redis_url,
        pytest.MonkeyPatch.context() as monkeypatch,
    ):
        settings = pipeline_settings(
            db_url,
            redis_url,
            api_max_batch="50",
            webhook_key=TEST_WEBHOOK_KEY,
            **getattr(request.module, "API_SETTINGS", {}),
        )
        configure(monkeypatch, **settings)
        env = process_env(settings)
        with session_scope(db_url) as session:
            keys = {
                name: create_key(session, name=name, scopes=scopes)
                for name, scopes in (
                    ("rw", ["read", "write"]),
                    ("read", ["read"]),
                    ("write", ["write"]),
                )
            }
        port = free_port()
        log_path = directory / "api.log"
        args = ["api", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
        process = start(args, env, log_path, cwd=directory)
        server = Server(f"http://127.0.0.1:{port}", db_url, redis_url, keys, process, log_path)
        try:
            wait_for_http(
                f"{server.url}/healthz", process, timeout=90, what="evalq api", ok=(200, 503)
            )
            put = server.client().put("/v1/tasks/t1", json=TASK)
            assert put.status_code in (200, 201), put.text
            yield server
        finally:
            for client in server.clients:
                client.close()
            stop(process)
        output = log_path.read_text(errors="replace")
        assert "Traceback" not in output, output[-4000:]
        get_settings.cache_clear()
