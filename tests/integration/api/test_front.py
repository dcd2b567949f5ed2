"""`evalq api`'s front: /healthz answers while the API loads, other requests wait for it, and
the API's own lifespan runs (startup before its first request, shutdown with the server).

A real uvicorn server on a free port; the API it loads is gated by the test so "still loading"
is a state the test holds, not a race."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import httpx
import pytest
import uvicorn
from fastapi import FastAPI

from evalq.producer.api.front import ApiFront, AsgiApp, create_front
from tests.support.processes import PATIENCE, free_port
from tests.support.settings import configure

LOAD_TIMEOUT_S = 60


class GatedApi:
    """A small FastAPI app whose loading waits until the test opens the gate."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.events: list[str] = []

    def load(self) -> AsgiApp:
        assert self.gate.wait(LOAD_TIMEOUT_S), "the test never opened the gate"

        @asynccontextmanager
        async def lifespan(_: FastAPI) -> AsyncIterator[None]:
            self.events.append("startup")
            yield
            self.events.append("shutdown")

        app = FastAPI(lifespan=lifespan)

        @app.get("/ping")
        def ping() -> dict[str, list[str]]:
            return {"events_before": list(self.events)}

        @app.get("/healthz")
        def healthz() -> dict[str, str]:
            return {"from": "the loaded API"}

        return app


@contextmanager
def served(front: ApiFront) -> Iterator[str]:
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(front, host="127.0.0.1", port=port, lifespan="on", log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        for _ in range(600):
            if server.started:
                break
            thread.join(0.1)
        assert server.started, "uvicorn did not start"
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(60)


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings with a SQLite store and no broker (the broker check says "in-process")."""
    monkeypatch.delenv("EVALQ_BROKER_URL", raising=False)
    configure(monkeypatch, database_url=f"sqlite:///{tmp_path / 'evalq.db'}")


def in_thread(call: Callable[[], httpx.Response]) -> tuple[threading.Thread, list[httpx.Response]]:
    answers: list[httpx.Response] = []
    thread = threading.Thread(target=lambda: answers.append(call()), daemon=True)
    thread.start()
    return thread, answers


@pytest.mark.usefixtures("store")
def test_healthz_answers_while_the_api_loads_and_other_requests_wait_for_it() -> None:
    api = GatedApi()
    front = ApiFront(api.load)
    with served(front) as url:
        health = httpx.get(f"{url}/healthz", timeout=30 * PATIENCE)
        assert health.status_code == 200
        assert health.json()["status"] == "ok"
        assert health.json()["database"] == {"ok": True, "detail": "sqlite"}
        assert not front.loaded

        waiting, answers = in_thread(lambda: httpx.get(f"{url}/ping", timeout=LOAD_TIMEOUT_S))
        waiting.join(1.0)
        assert not answers, "a request reached the API before it was loaded"

        api.gate.set()
        waiting.join(LOAD_TIMEOUT_S)
        assert answers and answers[0].status_code == 200
        assert answers[0].json() == {"events_before": ["startup"]}  # lifespan ran first
        assert front.loaded
        assert httpx.get(f"{url}/healthz", timeout=30 * PATIENCE).json() == {
            "from": "the loaded API"
        }
    assert api.events == ["startup", "shutdown"]


@pytest.mark.usefixtures("store")
def test_an_api_that_fails_to_load_answers_503_with_the_reason() -> None:
    def broken() -> AsgiApp:
        raise RuntimeError("no such profile: exotic")

    with served(ApiFront(broken)) as url:
        for _ in range(300):  # until the failed load has settled
            answer = httpx.get(f"{url}/healthz", timeout=30 * PATIENCE)
            if answer.status_code == 503:
                break
            threading.Event().wait(0.1)
        assert answer.status_code == 503
        assert "RuntimeError: no such profile: exotic" in answer.json()["detail"]
        other = httpx.get(f"{url}/v1/tasks", timeout=30 * PATIENCE)
        assert other.status_code == 503
        assert "failed to start" in other.json()["detail"]


@pytest.mark.usefixtures("store")
def test_the_real_api_is_served_behind_the_front() -> None:
    front = create_front()
    with served(front) as url:
        assert httpx.get(f"{url}/healthz", timeout=30 * PATIENCE).status_code == 200
        document = httpx.get(f"{url}/openapi.json", timeout=LOAD_TIMEOUT_S)
        assert document.status_code == 200
        assert document.json()["info"]["title"] == "evalq"
        assert front.loaded
