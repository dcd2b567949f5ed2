"""Monitors at every door over a real `evalq api`: PUT/GET/DELETE /v1/monitors, `HttpClient`
(sync and async), `Client` and `evalq monitor`, one answer; bad input refused naming the field,
nothing stored; the tasks page and the board show a monitor's state ("no data" before enough
runs); /metrics still parses with prometheus_client's parser, with the score and monitor
gauges (one series per task and kind key, whatever the number of runs)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from typer.testing import CliRunner

from evalq.core.errors import InvalidInput, NotFound
from evalq.core.monitors import Monitor, task_cap_rule
from evalq.producer.cli import app as cli
from evalq.producer.http import AsyncHttpClient, HttpClient
from evalq.service.client import Client
from evalq.workers.bootstrap import worker_app
from evalq.workers.embedded import embedded_worker
from tests.integration.api.conftest import Server, submission
from tests.support.processes import PATIENCE
from tests.support.ui import sign_in

TASK = {"id": "mon-t", "category": "debugging", "success_criteria": [{"type": "no_errors"}]}
QUIET = {"id": "mon-quiet", "category": "debugging"}
MONITOR = {"tasks": "mon-*", "alert": 10, "warning": 20, "min_n": 2, "last_runs": 5}
PER_TASK = 4
API_SETTINGS = {"monitor_max_per_task": str(PER_TASK)}  # the server's and this process's


def _evaluate(api: Server, ids: list[str]) -> None:
    app = worker_app()
    try:
        with embedded_worker(app, concurrency=4):
            assert set(Client(app=app).wait(ids, timeout=180 * PATIENCE).values()) == {"done"}
    finally:
        app.close()


@pytest.fixture(scope="module")
def runs(api: Server) -> Server:
    """Two evaluated runs of mon-t; mon-quiet has none."""
    writer = api.client()
    for task in (TASK, QUIET):
        assert writer.put(f"/v1/tasks/{task['id']}", json=task).status_code in (200, 201)
    for n in range(2):
        run = submission(f"mon-run-{n}", "mon-t", output=f"Fixed the parser (attempt {n}).")
        assert writer.post("/v1/submissions", json=run).status_code == 201
    _evaluate(api, ["mon-run-0", "mon-run-1"])
    return api


def _states(found: Monitor) -> dict[str, str]:
    return {s.task_id: s.state for s in found.states}


def test_every_door_sets_lists_and_removes_one_monitor(runs: Server) -> None:
    api = runs
    answer = api.client().put("/v1/monitors/quality", json=MONITOR)
    assert answer.status_code == 200, answer.text
    found = Monitor.model_validate(answer.json())
    # mon-t has two runs (min_n 2): a state; mon-quiet none: no data
    assert _states(found)["mon-quiet"] == "no data"
    assert _states(found)["mon-t"] in ("ok", "warning", "alert")
    assert found.window == "last 5 runs" and found.created_by == "rw"
    listed = api.client("read").get("/v1/monitors").json()["monitors"]
    served = next(m for m in listed if m["name"] == "quality")
    assert served == api.client("read").get("/v1/monitors/quality").json()
    with HttpClient(api.url, api.keys["read"]) as http:
        assert http.monitor("quality").model_dump(mode="json") == served

    async def through_aio() -> dict[str, Any]:
        async with AsyncHttpClient(api.url, api.keys["read"]) as client:
            return (await client.monitor("quality")).model_dump(mode="json")

    assert asyncio.run(through_aio()) == served
    assert Client().monitor("quality").model_dump(mode="json") == served
    listed_cli = CliRunner().invoke(cli, ["monitor", "list"])
    assert listed_cli.exit_code == 0, listed_cli.output
    assert "quality" in listed_cli.output and "no data" in listed_cli.output
    with HttpClient(api.url, api.keys["rw"]) as http:
        again = http.set_monitor("quality2", MONITOR | {"statistic": "quantile", "quantile": 0.5})
        assert again.definition.quantile == 0.5
        http.remove_monitor("quality2")
        with pytest.raises(NotFound):
            http.monitor("quality2")
    removed = CliRunner().invoke(cli, ["monitor", "remove", "quality"])
    assert removed.exit_code == 0, removed.output
    assert api.client("read").get("/v1/monitors/quality").status_code == 404


@pytest.mark.parametrize(
    ("name", "body", "field"),
    [
        ("bad name", MONITOR, "name"),
        ("m1", MONITOR | {"warning": 5}, "warning"),
        ("m1", MONITOR | {"statistic": "quantile"}, "quantile"),
        ("m1", {k: v for k, v in MONITOR.items() if k != "alert"}, "alert"),
    ],
)
def test_a_bad_monitor_is_refused_at_every_door_naming_the_field(
    runs: Server, name: str, body: dict[str, Any], field: str
) -> None:
    api = runs
    before = api.client("read").get("/v1/monitors").json()
    answer = api.client().put(f"/v1/monitors/{name}", json=body)
    assert answer.status_code == 422, answer.text
    assert field in [p["field"] for p in answer.json()["detail"]]
    with HttpClient(api.url, api.keys["rw"]) as http, pytest.raises(InvalidInput) as raised:
        http.set_monitor(name, body)
    assert field in [f for f, _ in raised.value.problems]
    with pytest.raises(InvalidInput) as raised:
        Client().set_monitor(name, body)
    assert field in [f for f, _ in raised.value.problems]
    options = {"tasks": "--tasks", "alert": "--alert", "warning": "--warning"}
    options |= {"statistic": "--statistic", "min_n": "--min-n", "last_runs": "--last-runs"}
    args = ["monitor", "set", name]
    for key, flag in options.items():
        args += [flag, str(body[key])] if key in body else []
    refused = CliRunner().invoke(cli, args)
    assert refused.exit_code == 2 and field in refused.output, refused.output
    assert api.client("read").get("/v1/monitors").json() == before


def test_a_write_needs_the_write_scope(runs: Server) -> None:
    assert runs.client("read").put("/v1/monitors/q", json=MONITOR).status_code == 403


def test_the_pages_show_no_data_and_metrics_parse_with_the_new_gauges(
    runs: Server, tmp_path: Path
) -> None:
    api = runs
    assert api.client().put("/v1/monitors/pages", json=MONITOR).status_code == 200
    with httpx.Client(base_url=api.url, timeout=30 * PATIENCE) as browser:
        assert sign_in(browser, api.keys["read"]).status_code == 303
        tasks = browser.get("/").text
        board = browser.get("/ui/tasks/mon-quiet").text
    assert 'data-monitor="pages"' in tasks and "pages: no data" in tasks
    assert "<strong>pages</strong>: no data" in board
    response = api.client("read").get("/metrics")
    assert response.status_code == 200
    families = {f.name: f for f in text_string_to_metric_families(response.text)}
    scores = [s for s in families["evalq_task_score"].samples if s.labels["task"] == "mon-t"]
    assert [s.labels for s in scores] == [{"task": "mon-t", "key": "arena_overall_unadjusted"}]
    (runs_gauge,) = [
        s for s in families["evalq_task_score_runs"].samples if s.labels["task"] == "mon-t"
    ]
    assert runs_gauge.value == 2
    listed = api.client("read").get("/v1/monitors").json()["monitors"]
    watching = {
        task: sum(1 for m in listed for s in m["states"] if s["task_id"] == task)
        for task in ("mon-quiet", "mon-t")
    }
    held = {
        (s.labels["task"], s.labels["state"]): s.value
        for s in families["evalq_task_monitors"].samples
    }
    # one series per task and state, counting its monitors: mon-quiet has no runs at all
    assert watching["mon-quiet"] >= 1
    assert held[("mon-quiet", "no data")] == watching["mon-quiet"]
    assert held[("mon-quiet", "ok")] == 0
    assert sum(v for (task, _), v in held.items() if task == "mon-t") == watching["mon-t"]
    assert "evalq_monitor_state" not in families and "evalq_monitor_value" not in families
    # no per-run or per-monitor label anywhere among the new gauges
    for name in ("evalq_task_score", "evalq_task_monitors"):
        for sample in families[name].samples:
            assert set(sample.labels) <= {"task", "key", "state"}
    api.client().delete("/v1/monitors/pages")


def test_a_group_narrows_the_window(runs: Server) -> None:
    """by/group: the runs of one model count; a metadata value no run carries is no data."""
    with HttpClient(runs.url, runs.keys["rw"]) as http:
        model = http.set_monitor("by-model", MONITOR | {"by": "model", "group": "gpt-4o"})
        other = http.set_monitor("by-other", MONITOR | {"by": "model", "group": "o3"})
        branch = http.set_monitor("by-branch", MONITOR | {"by": "metadata.branch", "group": "main"})
        for name in ("by-model", "by-other", "by-branch"):
            http.remove_monitor(name)
    n = {m.name: {s.task_id: s.n for s in m.states} for m in (model, other, branch)}
    assert n["by-model"]["mon-t"] == 2
    assert n["by-other"]["mon-t"] == 0 and n["by-branch"]["mon-t"] == 0
    assert {s.task_id: s.state for s in branch.states}["mon-t"] == "no data"


def test_one_monitor_past_the_per_task_cap_is_refused_at_every_door(runs: Server) -> None:
    api = runs
    listed = api.client("read").get("/v1/monitors").json()["monitors"]
    watching = sum(1 for m in listed for s in m["states"] if s["task_id"] == "mon-t")
    extra = [f"cap-{n}" for n in range(PER_TASK - watching)]
    for name in extra:
        assert api.client().put(f"/v1/monitors/{name}", json=MONITOR).status_code == 200
    before = api.client("read").get("/v1/monitors").json()
    rule = task_cap_rule("mon-quiet", PER_TASK)  # the first task it would watch past the cap
    answer = api.client().put("/v1/monitors/one-more", json=MONITOR)
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"] == [{"field": "tasks", "rule": rule}]
    with HttpClient(api.url, api.keys["rw"]) as http, pytest.raises(InvalidInput) as raised:
        http.set_monitor("one-more", MONITOR)
    assert raised.value.problems == [("tasks", rule)]
    with pytest.raises(InvalidInput) as raised:
        Client().set_monitor("one-more", MONITOR)
    assert raised.value.problems == [("tasks", rule)]
    args = ["monitor", "set", "one-more", "--tasks", "mon-*", "--alert", "10"]
    refused = CliRunner().invoke(cli, args)
    assert refused.exit_code == 2 and "EVALQ_MONITOR_MAX_PER_TASK" in refused.output
    assert api.client("read").get("/v1/monitors").json() == before  # nothing stored
    # the listing is paged: a page of one, then the next; past the page limit refused
    first = api.client("read").get("/v1/monitors", params={"limit": 1}).json()
    assert len(first["monitors"]) == 1 and first["next"] == first["monitors"][0]["name"]
    second = api.client("read").get("/v1/monitors", params={"limit": 1, "after": first["next"]})
    assert second.json()["monitors"][0]["name"] > first["next"]
    assert api.client("read").get("/v1/monitors", params={"limit": 501}).status_code == 422
    for name in extra:
        api.client().delete(f"/v1/monitors/{name}")
