"""Configured secrets never reach a row, a log, a response or a Redis key (issue 14, item 3).

Real processes: `evalq api` and `evalq worker` on Redis and the store (SQLite and PostgreSQL),
the judge talking over HTTP to `tests/support/openai_stub.py`, which fails every request with a
401 that repeats the credentials it was sent. Planted:

- ``EVALQ_JUDGE_API_KEY``: the stub echoes it in the error body (first worker);
- a user and password in ``EVALQ_JUDGE_BASE_URL``: httpx sends them as basic auth, the stub
  echoes the header and the decoded pair, and the URL is part of the judge's model id, which is
  stored and names the rate-limit keys (second worker);
- a password in ``EVALQ_DATABASE_URL`` (PostgreSQL, which trusts local connections, ignores it);
- a task that raises with the API key in its message, so Celery's own failure log has it.

Then every table of the store, both workers' and the API's logs, every API response body and
every Redis key name (SCAN) are searched for each secret.
"""

from __future__ import annotations

import base64
import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
import sqlalchemy as sa

from evalq.core.settings import Settings
from evalq.store.db import engine_for, session_scope
from evalq.store.keys import create_key
from evalq.workers.app import make_app
from tests.integration.conftest import REDIS_TEST_DB
from tests.support.databases import fresh_database, private_redis
from tests.support.failing_task import TASK_NAME
from tests.support.openai_stub import OpenAIStub
from tests.support.processes import PATIENCE, free_port, process_env, start, stop, wait_for_http
from tests.support.settings import pipeline_settings

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
TASK = {"id": "secret-task", "category": "data_analysis"}  # the judge alone decides the outcome
FINISHED = ("done", "degraded", "failed")
URL_USER = "evalq-judge"


def planted() -> dict[str, str]:
    """Fresh secrets, long and unique enough that no other text contains them by chance."""
    tag = uuid.uuid4().hex
    secrets = {
        "judge API key": f"sk-planted-judge-key-{tag}",
        "judge URL password": f"planted-url-pass-{tag}",
        "database password": f"planted-db-pass-{tag}",
    }
    pair = f"{URL_USER}:{secrets['judge URL password']}".encode()
    secrets["judge URL basic auth"] = base64.b64encode(pair).decode()
    return secrets


def with_password(url: str, password: str) -> str:
    """A PostgreSQL URL with ``password`` written in (``scheme://user:password@host/db``)."""
    scheme, rest = url.split("://", 1)
    user, host = rest.split("@", 1)
    return f"{scheme}://{user}:{password}@{host}"


def dump_store(url: str) -> str:
    """Every row of every table of the store, as text."""
    metadata = sa.MetaData()
    engine = engine_for(url)
    metadata.reflect(engine)
    lines = []
    with engine.connect() as connection:
        for table in metadata.sorted_tables:
            for row in connection.execute(sa.select(table)):
                lines.append(f"{table.name}: {tuple(row)!r}")
    assert any(line.startswith("tier_results") for line in lines)  # the dump is not empty
    return "\n".join(lines)


@dataclass
class Deployment:
    """The processes of one run and everything they said."""

    directory: Path
    env: dict[str, str]
    api_url: str
    keys: dict[str, str]
    bodies: list[str] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)

    def client(self, key: str) -> httpx.Client:
        """An API client that keeps every response body it receives."""

        def keep(response: httpx.Response) -> None:
            response.read()
            self.bodies.append(response.text)

        return httpx.Client(
            base_url=self.api_url,
            headers={"Authorization": f"Bearer {self.keys[key]}"},
            timeout=30 * PATIENCE,
            event_hooks={"response": [keep]},
        )

    def worker(self, name: str, **settings: str) -> subprocess.Popen[bytes]:
        """`evalq worker` on every queue, with ``settings`` over the deployment's."""
        env = self.env | {f"EVALQ_{k.upper()}": v for k, v in settings.items()}
        log = self.directory / f"worker-{name}.log"
        self.logs.append(log)
        args = ["worker", "--pool", "threads", "--concurrency", "4", "--loglevel", "INFO"]
        args += ["--include", "tests.support.failing_task", "--hostname", f"{name}@%h"]
        return start(args, env, log, cwd=ROOT)


@pytest.fixture(params=["sqlite", "postgresql"])
def deployment(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[Deployment, dict[str, str], OpenAIStub, str, str]]:
    """The API over a fresh store and Redis, with the secrets planted in its settings."""
    secrets = planted()
    with (
        fresh_database(request.param, tmp_path) as admin_url,
        private_redis(REDIS_TEST_DB) as redis_url,
        OpenAIStub(proportions={"echo_credentials": 1.0}) as stub,
    ):
        db_url = admin_url
        if request.param == "postgresql":
            db_url = with_password(admin_url, secrets["database password"])
        with session_scope(admin_url) as session:
            keys = {
                "rw": create_key(session, name="rw", scopes=["read", "write"]),
                "read": create_key(session, name="read", scopes=["read"]),
            }
        settings = pipeline_settings(
            db_url,
            redis_url,
            judge_model="openai:stub-judge",
            judge_base_url=stub.base_url,
            judge_api_key=secrets["judge API key"],
            judge_max_attempts="1",
        )
        env = process_env(settings)
        # the subprocesses import this worktree's evalq and the tests package
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
        port = free_port()
        run = Deployment(tmp_path, env, f"http://127.0.0.1:{port}", keys)
        api_log = tmp_path / "api.log"
        run.logs.append(api_log)
        args = ["api", "--host", "127.0.0.1", "--port", str(port), "--log-level", "info"]
        api = start(args, env, api_log, cwd=ROOT)
        try:
            health = f"{run.api_url}/healthz"
            wait_for_http(health, api, timeout=90, what="evalq api", ok=(200, 503))
            yield run, secrets, stub, admin_url, redis_url
        finally:
            stop(api)
            engine_for(admin_url).dispose()


def evaluate(run: Deployment, sid: str, worker: subprocess.Popen[bytes]) -> dict[str, Any]:
    """Submit ``sid`` over HTTP, let ``worker`` evaluate it, and read it back (read-only key)."""
    with run.client("rw") as writer, run.client("read") as reader:
        assert writer.put(f"/v1/tasks/{TASK['id']}", json=TASK).status_code in (200, 201)
        posted = writer.post(
            "/v1/submissions",
            json={
                "id": sid,
                "task_id": TASK["id"],
                "tool": "aider",
                "model": "gpt-4o",
                "usage": {"input_tokens": 100, "output_tokens": 50},
                "output": "The method is sound; add an ablation of the window size.",
            },
        )
        assert posted.status_code == 201, posted.text
        deadline = time.monotonic() + 120 * PATIENCE
        while True:
            result: dict[str, Any] = reader.get(f"/v1/submissions/{sid}").json()
            if result["status"] in FINISHED or time.monotonic() > deadline:
                break
            assert worker.poll() is None, "the worker exited"
            time.sleep(0.3)
        reader.get(f"/v1/tasks/{TASK['id']}/leaderboard")
    assert result["status"] == "degraded", result
    return result


def test_no_secret_reaches_a_row_a_log_a_response_or_a_key(
    deployment: tuple[Deployment, dict[str, str], OpenAIStub, str, str],
) -> None:
    run, secrets, stub, admin_url, redis_url = deployment
    port = stub.base_url.split(":")[2].split("/")[0]
    url_with_userinfo = f"http://{URL_USER}:{secrets['judge URL password']}@127.0.0.1:{port}/v1"

    worker = run.worker("key")
    try:
        by_key = evaluate(run, "leak-key", worker)
        app = make_app(Settings(broker_url=redis_url, result_backend=redis_url))
        failing = app.send_task(TASK_NAME)
        with pytest.raises(RuntimeError):
            failing.get(timeout=60 * PATIENCE, propagate=True)
        app.close()
    finally:
        stop(worker)
    worker = run.worker("url", judge_base_url=url_with_userinfo)
    try:
        by_url = evaluate(run, "leak-url", worker)
    finally:
        stop(worker)

    client = redis.Redis.from_url(redis_url)
    keys = [k.decode(errors="replace") for k in client.scan_iter(count=1000)]
    client.close()

    places = {
        "store": dump_store(admin_url),
        "redis keys": "\n".join(keys),
        "API responses": "\n".join(run.bodies),
        **{log.name: log.read_text(errors="replace") for log in run.logs},
    }
    leaks = [
        f"{name} in {place}"
        for place, text in places.items()
        for name, secret in secrets.items()
        if secret in text
    ]
    assert not leaks, "; ".join(leaks)

    # The secrets did reach evalq: the stub echoed each of them in the judge's error.
    assert stub.served["echo_credentials"] == 2
    key_error = by_key["tiers"]["judge"]["error"]["message"]
    assert "Incorrect API key provided: ***" in key_error
    url_error = by_url["tiers"]["judge"]["error"]["message"]
    assert "Incorrect credentials provided: Basic *** (evalq-judge:***)" in url_error
    judge_model = by_url["tiers"]["judge"]["metrics"]["model"]
    assert judge_model == f"openai:stub-judge@http://***@127.0.0.1:{port}/v1"
    assert any(":ratelimit:" in k for k in keys)  # the judge did name keys after its model
    assert "upstream refused key ***" in places["worker-key.log"]  # Celery logged the failure
