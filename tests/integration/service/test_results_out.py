"""Results out never holds up or fails a merge: with the endpoint refusing connections, or
answering nothing at all, runs are merged and their evaluations stored all the same."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evalq.core.settings import Settings
from evalq.service.client import Client
from tests.support.databases import fresh_database

TASK = {"id": "plain", "category": "debugging", "success_criteria": [{"type": "no_errors"}]}


def run(sid: str) -> dict[str, Any]:
    usage = {"total_tokens": 100, "tool_calls": 1, "execution_time": 3.0}
    return {"id": sid, "task_id": "plain", "tool": "aider", "model": "gpt-4o", "usage": usage}


@pytest.fixture
def silent() -> Iterator[str]:
    """An OTLP endpoint that accepts connections and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1/logs"


@pytest.fixture
def refusing() -> str:
    """An OTLP endpoint on a port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1/logs"


@pytest.mark.parametrize("endpoint", ["silent", "refusing"])
def test_a_dead_results_endpoint_never_fails_or_holds_a_merge(
    endpoint: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = request.getfixturevalue(endpoint)
    with fresh_database("sqlite", tmp_path) as db_url:
        client = Client(
            Settings(database_url=db_url, otel_results_endpoint=url, otel_results_timeout_s=0.5)
        )
        client.put_task(TASK)
        # nothing to fan out: merged at intake, in this call, then announced
        client.submit_many([run(f"r{i}") for i in range(3)])
        assert [client.status(f"r{i}") for i in range(3)] == ["done"] * 3
