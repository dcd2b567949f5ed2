"""A task that names its expected tool calls: a run's trajectory match is in its graph tier
(GET /v1/submissions/{id}) and on its page, over a real `evalq api` evaluating in-process."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.integration.api.conftest import Server, serve_api, submission
from tests.support.processes import PATIENCE, wait_until
from tests.support.ui import sign_in

TASK = {
    "id": "plan-t",
    "category": "debugging",
    "expected_tool_calls": [
        {"tool": "search", "arguments": {"query": "date parser"}},
        {"tool": "edit"},
        {"tool": "test"},
    ],
    "trajectory_mode": "in_order",
}
TRACE = {
    "steps": [
        {"tool": "search", "arguments": {"query": "date parser", "limit": 5}},
        {"tool": "edit"},
        {"tool": "run"},
        {"tool": "edit"},
        {"tool": "run"},
        {"tool": "edit"},
        {"tool": "run"},
    ]
}


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serve_api("sqlite", tmp_path_factory.mktemp("plan"), broker=False) as server:
        yield server


def test_the_match_is_served_and_shown_on_the_run_page(api: Server) -> None:
    writer = api.client()
    assert writer.put("/v1/tasks/plan-t", json=TASK).status_code in (200, 201)
    run = submission("plan-1", "plan-t", trace=TRACE)
    assert writer.post("/v1/submissions", json=run).status_code == 201

    def evaluated() -> bool:
        return writer.get("/v1/submissions/plan-1").json()["status"] in ("done", "degraded")

    wait_until(evaluated, timeout=180, what="the run to be evaluated")
    graph = writer.get("/v1/submissions/plan-1").json()["tiers"]["graph"]
    match = graph["metrics"]["trajectory"]
    assert match["mode"] == "in_order" and match["passed"] is False
    assert match["matched"] == ["search(query='date parser')", "edit"]
    assert match["missing"] == ["test"] and match["score"] == pytest.approx(2 / 3)
    assert match["loops"] == [{"cycle": ["edit", "run"], "repeats": 3, "start": 1}]
    with httpx.Client(base_url=api.url, timeout=30 * PATIENCE) as browser:
        assert sign_in(browser, api.keys["read"]).status_code == 303
        page = browser.get("/ui/runs/plan-1").text
    assert "Tool calls against the plan" in page and "failed" in page
    assert "edit → run × 3" in page
