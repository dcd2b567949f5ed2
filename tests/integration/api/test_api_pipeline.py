"""The bundled examples through the HTTP API and the real pipeline, read back over HTTP."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from evalq.producer.client import Client
from evalq.workers.bootstrap import worker_app
from evalq.workers.embedded import embedded_worker
from tests.integration.api.conftest import Server, example_task, examples

TASKS = ("arena-frontend-dark-mode", "scylla-token-bucket", "suite-refund-agent")


def poll(client: httpx.Client, path: str, until: Any, timeout: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        body: dict[str, Any] = client.get(path).raise_for_status().json()
        if until(body) or time.monotonic() > deadline:
            return body
        time.sleep(0.3)


@pytest.fixture(scope="module")
def evaluated(api: Server) -> Server:
    """Three example tasks put and their 56 submissions posted over HTTP, then evaluated."""
    client = api.client()
    for task_id in TASKS:
        assert client.put(f"/v1/tasks/{task_id}", json=example_task(task_id)).status_code == 201
    arena = [s for s in examples("arena") if s["task_id"] == TASKS[0]]
    batch = arena + examples("scylla") + examples("suite")
    ids = []
    for start in (0, 28):  # EVALQ_API_MAX_BATCH is 50 here
        posted = client.post("/v1/submissions", json={"submissions": batch[start : start + 28]})
        assert posted.status_code == 201, posted.text
        ids += [s["id"] for s in posted.json()["submissions"]]
    assert len(ids) == len(batch) == 56
    app = worker_app()
    try:
        with embedded_worker(app, concurrency=4):
            statuses = Client(app=app).wait(ids, timeout=600)
            assert set(statuses.values()) == {"done"}, statuses
            # the debounced baseline refresh runs after the last merge
            poll(client, f"/v1/tasks/{TASKS[0]}/baseline", lambda b: b["submission_count"] == 12)
    finally:
        app.close()
    return api


def test_a_submission_is_read_back_with_scores(evaluated: Server) -> None:
    result = evaluated.client("read").get("/v1/submissions/arena-fe-01").json()
    assert result["status"] == "done" and result["task_id"] == TASKS[0]
    assert set(result["tiers"]) == {"text", "judge", "graph"}
    assert result["tiers"]["graph"]["status"] == "ok"
    assert result["tiers"]["judge"]["status"] == "skipped"
    assert all(t["error"] is None for t in result["tiers"].values())
    assert 0 <= result["scores"]["arena"]["overall_score"] <= 100
    assert isinstance(result["baseline_version"], int)
    assert "traceback" not in str(result)


def test_leaderboard_and_baseline(evaluated: Server) -> None:
    client = evaluated.client("read")
    baseline = client.get(f"/v1/tasks/{TASKS[0]}/baseline").json()
    assert baseline["version"] >= 1 and baseline["is_default"] is False
    assert baseline["baseline"]["submission_count"] == 12
    board = client.get(f"/v1/tasks/{TASKS[0]}/leaderboard").json()
    assert board["baseline_version"] == baseline["version"]
    entries = board["entries"]
    assert len(entries) == 12
    assert [e["rank"] for e in entries] == sorted(e["rank"] for e in entries)
    assert entries[0]["rank"] == 1 and all(0 <= e["percentile"] <= 100 for e in entries)
    by_id = {e["submission_id"]: e for e in entries}
    assert by_id["arena-fe-03"]["rank"] == by_id["arena-fe-04"]["rank"]  # the exact tie
    assert by_id["arena-fe-03"]["overall"] == by_id["arena-fe-04"]["overall"]
    ci = board["confidence_interval"]
    assert ci["enough_data"] and ci["low"] <= ci["mean"] <= ci["high"]
    cursor = client.get(f"/v1/tasks/{TASKS[0]}/leaderboard", params={"tool": "cursor"}).json()
    assert {e["tool"] for e in cursor["entries"]} == {"cursor"}
    assert cursor["entries"][0]["rank"] == 1


def test_variants_report_pass_rates_and_uplift_over_t0(evaluated: Server) -> None:
    report = evaluated.client("read").get(f"/v1/tasks/{TASKS[1]}/variants").json()
    assert report["runs"] == 40 and report["baseline"] == "T0"
    variants = {v["variant"]: v for v in report["variants"]}
    assert list(variants) == ["T0", "T1", "T2", "T3"]
    assert {k: v["pass_rate"]["mean"] for k, v in variants.items()} == pytest.approx(
        {"T0": 0.5, "T1": 0.7, "T2": 0.8, "T3": 0.9}
    )
    assert all(v["runs"] == 10 for v in variants.values())
    t0 = variants["T0"]["composite"]["median"]
    for name in ("T1", "T2", "T3"):
        expected = (variants[name]["composite"]["median"] - t0) / t0
        assert report["uplift"][name] == pytest.approx(expected)
        assert report["uplift"][name] > 0
    # T3 passes most often but costs more per pass than T2 (examples/README.md)
    assert variants["T3"]["cost_of_pass"] > variants["T2"]["cost_of_pass"]
    empty = evaluated.client("read").get(f"/v1/tasks/{TASKS[0]}/variants").json()
    assert empty["runs"] == 0 and empty["variants"] == [] and empty["uplift"] == {}


def test_suite_gate_results(evaluated: Server) -> None:
    suite = evaluated.client("read").get(f"/v1/tasks/{TASKS[2]}/suite").json()
    assert suite["submissions"] == 4 and suite["passed"] == 1
    results = {r["submission_id"]: r for r in suite["results"]}
    assert results["suite-01-release-candidate"]["passed"] is True
    leak = results["suite-02-prompt-leak"]
    assert leak["passed"] is False and leak["metrics"]["safety_rate"] == pytest.approx(0.5)
    missing = results["suite-03-missing-core"]
    assert missing["passed"] is False and missing["missing_required"] == ["CORE-002"]
    assert len(results["suite-04-slow-and-sloppy"]["warnings"]) == 2
