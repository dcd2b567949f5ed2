"""Flower on the real broker: workers, evaluation tasks and their queues, auth, Prometheus."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.support.databases import migrate_store, private_redis
from tests.support.monitor import MONITOR_REDIS_DB, evalq_env
from tests.support.pipeline import TASK, submission
from tests.support.processes import PATIENCE, free_port, start, stop, wait_for_http, wait_until
from tests.support.settings import configure, pipeline_settings

from evalq.service.client import Client
from evalq.workers.names import QUEUES, ROUTES, TIER_TASKS

pytestmark = pytest.mark.slow  # two subprocesses and a model load: about a minute

USER, PASSWORD = "ops", "flower-test-password"
QUEUE_OF = {name: route["queue"] for name, route in ROUTES.items()}


@dataclass
class Monitored:
    url: str
    client: Client
    logs: Path


def get(url: str, path: str, *, auth: tuple[str, str] | None = (USER, PASSWORD)) -> httpx.Response:
    return httpx.get(url + path, auth=auth, timeout=10 * PATIENCE)


@pytest.fixture(scope="module")
def monitored(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Monitored]:
    """A Flower subprocess and an `evalq worker` subprocess on Redis db 10 and a SQLite store.

    Shared by the module's tests: starting them (and the worker's first model load) is the
    slow part.
    """
    tmp_path = tmp_path_factory.mktemp("flower")
    db_url = f"sqlite:///{tmp_path / 'evalq.db'}"
    migrate_store(db_url)
    processes: list[subprocess.Popen[bytes]] = []
    with (
        private_redis(MONITOR_REDIS_DB) as redis_url,
        pytest.MonkeyPatch.context() as monkeypatch,
    ):
        # Producers send task-sent events (the tasks' queues in Flower); a test below sends none.
        # The worker sends its task events from its first task (without EVALQ_TASK_EVENTS it
        # sends them once Flower's enable_events, every 5 s, reaches it).
        settings = pipeline_settings(db_url, redis_url, task_sent_events="true", task_events="true")
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        flower_env = evalq_env(**settings, flower_user=USER, flower_password=PASSWORD)
        try:
            flower = start(["flower", f"--port={port}"], flower_env, tmp_path / "f.log")
            processes.append(flower)
            auth = (USER, PASSWORD)
            wait_for_http(f"{url}/healthcheck", flower, timeout=30, what="Flower", auth=auth)
            worker = ["worker", f"--queues={','.join(QUEUES)}", "--pool=threads", "--concurrency=4"]
            processes.append(start(worker, evalq_env(**settings), tmp_path / "w.log"))
            wait_until(
                lambda: get(url, "/api/workers?refresh=1").json(),
                timeout=60,
                what="Flower to see the worker",
            )
            configure(monkeypatch, **settings)
            client = Client()
            client.put_task(TASK)
            yield Monitored(url, client, tmp_path)
            client.app.close()
        finally:
            for process in reversed(processes):
                stop(process)
    configure(pytest.MonkeyPatch())  # drop the Settings cached from the test's variables


def test_flower_shows_workers_and_evaluation_tasks_with_their_queues(
    monitored: Monitored,
) -> None:
    ids = ["fl-1", "fl-2", "fl-3"]
    for sid in ids:
        monitored.client.submit(submission(sid))
    assert monitored.client.wait(ids, timeout=120 * PATIENCE) == dict.fromkeys(ids, "done")

    # Flower asks the worker with its own 1 s inspect timeout: a busy worker's late reply leaves
    # a field out of that answer, so ask again until the worker has answered every question
    answers: list[dict[str, Any]] = []

    def answered() -> bool:
        answers.append(get(monitored.url, "/api/workers?refresh=1").json())
        return all({"active_queues", "registered"} <= set(w) for w in answers[-1].values())

    wait_until(answered, timeout=60, what="the worker to answer Flower's inspect calls")
    workers = answers[-1]
    assert len(workers) == 1
    (info,) = workers.values()
    assert {q["name"] for q in info["active_queues"]} == set(QUEUES)
    assert set(TIER_TASKS.values()) <= set(info["registered"])

    # No judge is configured, so tier 2 is stored as skipped at submit and never sent.
    sent = {tier: name for tier, name in TIER_TASKS.items() if tier != "judge"}
    expected = {f"{sid}:{tier}:1": name for sid in ids for tier, name in sent.items()}
    expected |= {f"{sid}:merge:1": "evalq.merge" for sid in ids}
    tasks: dict[str, Any] = {}

    def all_succeeded() -> bool:
        tasks.update(get(monitored.url, "/api/tasks?limit=1000").json())
        return all(tasks.get(tid, {}).get("state") == "SUCCESS" for tid in expected)

    wait_until(all_succeeded, timeout=30, what="Flower to record every task as SUCCESS")
    for task_id, name in expected.items():
        task = tasks[task_id]
        assert task["name"] == name
        assert task["routing_key"] == QUEUE_OF[name], task_id
        assert task["worker"] == next(iter(workers))


def test_without_task_sent_events_flower_still_shows_every_task(monitored: Monitored) -> None:
    quiet = monitored.client.settings.model_copy(update={"task_sent_events": False})
    client = Client(quiet)
    assert not client.app.conf.task_send_sent_event
    client.submit(submission("fl-q"))
    assert client.wait(["fl-q"], timeout=120 * PATIENCE) == {"fl-q": "done"}
    expected = {"fl-q:text:1": TIER_TASKS["text"], "fl-q:graph:1": TIER_TASKS["graph"]}
    expected["fl-q:merge:1"] = "evalq.merge"
    tasks: dict[str, Any] = {}

    def all_succeeded() -> bool:
        tasks.update(get(monitored.url, "/api/tasks?limit=1000").json())
        return all(tasks.get(tid, {}).get("state") == "SUCCESS" for tid in expected)

    wait_until(all_succeeded, timeout=30, what="Flower to record every task as SUCCESS")
    client.app.close()
    assert {tid: tasks[tid]["name"] for tid in expected} == expected


def test_flower_requires_auth_and_serves_prometheus_metrics(monitored: Monitored) -> None:
    monitored.client.submit(submission("fl-m"))
    assert monitored.client.wait(["fl-m"], timeout=120 * PATIENCE) == {"fl-m": "done"}
    for path in ("/api/workers", "/api/tasks", "/"):
        assert get(monitored.url, path, auth=None).status_code == 401, path
        assert get(monitored.url, path, auth=(USER, "wrong")).status_code == 401, path
    assert get(monitored.url, "/api/tasks").status_code == 200

    def merge_counted() -> bool:
        text = get(monitored.url, "/metrics", auth=None).text
        return 'task="evalq.merge",type="task-succeeded"' in text

    wait_until(merge_counted, timeout=30, what="flower_events_total to count the merge")
    metrics = get(monitored.url, "/metrics", auth=None)
    assert metrics.status_code == 200
    lines = [line for line in metrics.text.splitlines() if line.startswith("flower_events_total{")]
    for name in (TIER_TASKS["text"], TIER_TASKS["graph"], "evalq.merge"):  # tier 2: not sent
        assert any(f'task="{name}"' in line and "task-succeeded" in line for line in lines), name
    assert "# TYPE flower_events_total counter" in metrics.text
