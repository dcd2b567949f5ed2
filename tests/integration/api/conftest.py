"""A real `evalq api` process (uvicorn) on a free loopback port, over the test store and Redis."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
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
from tests.support.at_rest import wait_at_rest
from tests.support.databases import fresh_database, private_redis
from tests.support.processes import PATIENCE, free_port, process_env, start, stop, wait_for_http
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
EVALUATION_TABLES = (TierResultRow, EvaluationRow, BaselineRow, WebhookDeliveryRow)
"""Written by workers as they evaluate, never by a front door."""
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


def evaluate_examples(server: Server, runs: list[dict[str, Any]]) -> dict[str, str]:
    """Put every bundled task and submit ``runs`` through the HTTP client (40 a batch: the
    fixture's EVALQ_API_MAX_BATCH is 50), then wait for them and for the refreshes their
    merges scheduled (`wait_at_rest`: a board read before then may rank runs scored against
    an older baseline); each run's final status."""
    from evalq.producer.http import HttpClient

    with HttpClient(server.url, api_key=server.keys["rw"], timeout=60 * PATIENCE) as client:
        for task in json.loads((EXAMPLES / "tasks.json").read_text()):
            client.put_task(task)
        for start in range(0, len(runs), 40):
            client.submit_many(runs[start : start + 40])
        statuses = client.wait([r["id"] for r in runs], timeout=600 * PATIENCE)
    wait_at_rest(server.db_url)
    return statuses


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
    command: tuple[list[str], dict[str, str], Path] | None = None
    """How the process was started (args, environment, working directory), for `restart`."""

    def restart(self, *, kill: bool = False) -> None:
        """Stop the server (SIGTERM, or SIGKILL with ``kill``) and start it again on the same
        port, store and broker."""
        assert self.command is not None
        args, env, cwd = self.command
        if kill:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
        stop(self.process)
        self.process = start(args, env, self.log.with_suffix(".restarted.log"), cwd=cwd)
        wait_for_http(
            f"{self.url}/healthz",
            self.process,
            timeout=90,
            what="evalq api",
            ok=(200, 503),
        )

    @property
    def in_process(self) -> bool:
        """No broker: the server evaluates what it receives itself."""
        return not self.redis_url

    def client(self, key: str | None = "rw", **kwargs: Any) -> httpx.Client:
        """An httpx client sending the named key (None: no key)."""
        headers = {} if key is None else {"Authorization": f"Bearer {self.keys[key]}"}
        client = httpx.Client(base_url=self.url, headers=headers, timeout=30 * PATIENCE, **kwargs)
        self.clients.append(client)
        return client

    def counts(self) -> dict[str, int]:
        """Rows in every table, to show that a rejected request stored nothing.

        In-process the server is evaluating earlier runs meanwhile, so only the tables a front
        door writes are counted (a tier row or an evaluation cannot exist without its
        submission row).
        """
        tables = [t for t in TABLES if not (self.in_process and t in EVALUATION_TABLES)]
        with session_scope(self.db_url) as session:
            return {
                t.__tablename__: int(session.scalar(select(func.count()).select_from(t)) or 0)
                for t in tables
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
    extra = getattr(request.module, "API_SETTINGS", {})  # a module's own settings
    with serve_api(request.param, directory, extra=extra) as server:
        yield server


@contextmanager
def serve_api(
    backend: str,
    directory: Path,
    *,
    broker: bool = True,
    log_level: str = "warning",
    extra: dict[str, str] | None = None,
) -> Iterator[Server]:
    """A real `evalq api` over a fresh store of ``backend`` (see the `api` fixture).

    Args:
        backend: ``sqlite`` or ``postgresql``.
        directory: For the SQLite file and the server's log.
        broker: False: no EVALQ_BROKER_URL, so the server (and this process's `Client`)
            evaluates in-process.
        log_level: uvicorn's; ``info`` logs an access line per request.
        extra: More settings (names without the ``EVALQ_`` prefix).
    """
    with (
        fresh_database(backend, directory) as db_url,
        private_redis(REDIS_TEST_DB) as redis_url,
        pytest.MonkeyPatch.context() as monkeypatch,
    ):
        settings = pipeline_settings(
            db_url,
            redis_url,
            api_max_batch="50",
            webhook_key=TEST_WEBHOOK_KEY,
            **(extra or {}),
        )
        if not broker:
            redis_url = ""
            del settings["broker_url"], settings["result_backend"]
        configure(monkeypatch, **settings)
        if not broker:  # nor from the environment this process was started with
            monkeypatch.delenv("EVALQ_BROKER_URL", raising=False)
            monkeypatch.delenv("EVALQ_RESULT_BACKEND", raising=False)
            get_settings.cache_clear()
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
        args = ["api", "--host", "127.0.0.1", "--port", str(port), "--log-level", log_level]
        process = start(args, env, log_path, cwd=directory)
        server = Server(f"http://127.0.0.1:{port}", db_url, redis_url, keys, process, log_path)
        server.command = (args, env, directory)
        try:
            wait_for_http(
                f"{server.url}/healthz",
                process,
                timeout=90,
                what="evalq api",
                ok=(200, 503),
            )
            put = server.client().put("/v1/tasks/t1", json=TASK)
            assert put.status_code in (200, 201), put.text
            yield server
        finally:
            for client in server.clients:
                client.close()
            stop(server.process)  # the process `restart` started, if it did
        output = log_path.read_text(errors="replace")
        assert "Traceback" not in output, output[-4000:]
        get_settings.cache_clear()
