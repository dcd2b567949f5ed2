"""The bundled examples through the HTTP API and the real pipeline, read back over HTTP."""

from __future__ import annotations

import html
import json
import re
import time
from typing import Any

import httpx
import pytest

from evalq.core.errors import InvalidInput
from evalq.core.review_decisions import REASON_RULE
from evalq.producer.http import HttpClient
from evalq.read.compare import compare
from evalq.read.leaderboard import leaderboard
from evalq.read.reports import baseline_report, suite_report, variant_report
from evalq.service.client import Client
from evalq.store.db import session_scope
from evalq.workers.bootstrap import worker_app
from evalq.workers.embedded import embedded_worker
from tests.integration.api.conftest import Server, example_task, examples
from tests.support.processes import PATIENCE
from tests.support.ui import sign_in

TASKS = ("arena-frontend-dark-mode", "scylla-token-bucket", "suite-refund-agent")


def poll(client: httpx.Client, path: str, until: Any, timeout: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout * PATIENCE
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
            statuses = Client(app=app).wait(ids, timeout=600 * PATIENCE)
            assert set(statuses.values()) == {"done"}, statuses
            # the debounced baseline refresh runs after the last merge; of the 12 runs, the
            # outlier arena-fe-09 is held out of the baseline until a person accepts it
            poll(client, f"/v1/tasks/{TASKS[0]}/baseline", lambda b: b["submission_count"] == 11)
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
    assert baseline["baseline"]["submission_count"] == 11  # arena-fe-09 is held for review
    board = client.get(f"/v1/tasks/{TASKS[0]}/leaderboard").json()
    assert board["baseline_version"] == baseline["version"]
    assert len(board["entries"]) == 12 and not board["include_held"]
    # arena-fe-09 is held for review: listed last, unranked, out of the percentiles
    *entries, held = board["entries"]
    assert held["submission_id"] == "arena-fe-09" and held["held"] is True
    assert (held["rank"], held["percentile"], held["category_ranks"]) == (None, None, None)
    assert [e["rank"] for e in entries] == sorted(e["rank"] for e in entries)
    assert entries[0]["rank"] == 1 and all(0 <= e["percentile"] <= 100 for e in entries)
    included = client.get(f"/v1/tasks/{TASKS[0]}/leaderboard", params={"include_held": "true"})
    first = included.json()["entries"][0]
    assert (first["submission_id"], first["rank"], first["held"]) == ("arena-fe-09", 1, True)
    by_id = {e["submission_id"]: e for e in entries}
    assert by_id["arena-fe-03"]["rank"] == by_id["arena-fe-04"]["rank"]  # the exact tie
    assert by_id["arena-fe-03"]["overall"] == by_id["arena-fe-04"]["overall"]
    ci = board["confidence_interval"]
    assert ci["enough_data"] and ci["low"] <= ci["mean"] <= ci["high"]
    cursor = client.get(f"/v1/tasks/{TASKS[0]}/leaderboard", params={"tool": "cursor"}).json()
    assert {e["tool"] for e in cursor["entries"]} == {"cursor"}
    assert cursor["entries"][0]["rank"] == 1


def test_a_leaderboard_is_served_in_pages_of_the_whole_board(evaluated: Server) -> None:
    client = evaluated.client("read")
    path = f"/v1/tasks/{TASKS[0]}/leaderboard"
    whole = client.get(path).json()
    assert (whole["total"], whole["offset"], whole["limit"]) == (12, 0, None)
    listed = []
    for offset in range(0, 12, 5):
        page = client.get(path, params={"limit": 5, "offset": offset}).json()
        assert (page["total"], page["offset"], page["limit"]) == (12, offset, 5)
        assert page["confidence_interval"] == whole["confidence_interval"]
        listed += page["entries"]
    assert listed == whole["entries"]  # ranks, percentiles and the held run last, as a whole
    done = client.get(path, params={"status": "done", "limit": 50}).json()
    assert done["total"] == 12 and {e["status"] for e in done["entries"]} == {"done"}
    for bad in ({"limit": 0}, {"limit": 1001}, {"offset": -1}, {"status": "failed"}):
        refused = client.get(path, params=bad)
        assert refused.status_code == 422, refused.text
        assert next(iter(bad)) in refused.text
    with HttpClient(evaluated.url, evaluated.keys["read"]) as http:  # the client's door
        page = http.leaderboard(TASKS[0], limit=5, offset=5, status="done")
        assert page["entries"] == [e for e in whole["entries"] if e["status"] == "done"][5:10]
        with pytest.raises(InvalidInput) as refused:
            http.leaderboard(TASKS[0], limit=0)
        assert [name for name, _ in refused.value.problems] == ["limit"]


def cursor_pages(client: httpx.Client, path: str, **params: Any) -> list[dict[str, Any]]:
    """Every page of a board read by following next_cursor from the first (limit 3)."""
    pages = [client.get(path, params={"limit": 3, **params}).raise_for_status().json()]
    while pages[-1]["next_cursor"] is not None:
        after = {"limit": 3, "cursor": pages[-1]["next_cursor"], **params}
        pages.append(client.get(path, params=after).raise_for_status().json())
    return pages


@pytest.mark.parametrize("task_id", TASKS)
def test_a_still_board_is_paged_by_cursor_each_run_once(evaluated: Server, task_id: str) -> None:
    client = evaluated.client("read")
    path = f"/v1/tasks/{task_id}/leaderboard"
    whole = client.get(path).json()
    assert whole["next_cursor"] is None and "board_moved" not in whole  # not paged
    pages = cursor_pages(client, path)
    assert len(pages) == -(-whole["total"] // 3) > 1
    assert [e for page in pages for e in page["entries"]] == whole["entries"]
    assert "board_moved" not in pages[0]  # read without a cursor
    assert {page["board_moved"] for page in pages[1:]} == {False}
    assert [page["offset"] for page in pages] == list(range(0, whole["total"], 3))
    held = cursor_pages(client, path, include_held="true")
    ranked = client.get(path, params={"include_held": "true"}).json()["entries"]
    assert [e for page in held for e in page["entries"]] == ranked


def test_a_cursor_is_refused_with_other_filters_another_limit_or_an_offset(
    evaluated: Server,
) -> None:
    client = evaluated.client("read")
    path = f"/v1/tasks/{TASKS[0]}/leaderboard"
    first = client.get(path, params={"limit": 5}).json()
    cursor = first["next_cursor"]
    for params, field in (
        ({"limit": 6, "cursor": cursor}, "cursor"),  # another page size
        ({"limit": 5, "cursor": cursor, "tool": "cursor"}, "cursor"),  # another filter
        ({"limit": 5, "cursor": cursor, "offset": 5}, "offset"),
        ({"limit": 5, "cursor": "bm90IGEgY3Vyc29y"}, "cursor"),  # base64 of no cursor
        ({"limit": 5, "cursor": "%%%"}, "cursor"),
        ({"limit": 5, "cursor": "x" * 201}, "cursor"),
    ):
        refused = client.get(path, params=params)
        assert refused.status_code == 422, (params, refused.text)
        assert [d["field"] for d in refused.json()["detail"]] == [field], params
    with HttpClient(evaluated.url, evaluated.keys["read"]) as http:  # the client's door
        second = http.leaderboard(TASKS[0], limit=5, cursor=cursor)
        assert second["offset"] == 5 and second["board_moved"] is False
        with pytest.raises(InvalidInput) as refused:
            http.leaderboard(TASKS[0], limit=4, cursor=cursor)
        assert [name for name, _ in refused.value.problems] == ["cursor"]


def test_leaderboards_carry_rank_intervals_where_rows_can_be_resampled(
    evaluated: Server,
) -> None:
    client = evaluated.client("read")
    arena, scylla, suite = (client.get(f"/v1/tasks/{t}/leaderboard").json() for t in TASKS)
    assert arena["rank_uncertainty"]["applies_to"] is None
    assert {e["rank_interval"] is None for e in arena["entries"]} == {True}
    assert {e["rank_interval_note"] for e in arena["entries"] if not e["held"]} == {
        "a single submission: nothing to resample"
    }
    method = scylla["rank_uncertainty"]
    # the demo's T2 sits near the 2.5% cut: 1,000 resamples leave an edge undecided, 10,000 drawn
    assert (method["applies_to"], method["units"], method["resamples"]) == (
        "variants",
        "runs",
        10_000,
    )
    assert scylla["variants"][0]["variant"] == "T3"
    assert scylla["variants"][0]["rank_interval"] == {"low": 1, "high": 1}
    for variant in scylla["variants"]:
        interval = variant["rank_interval"]
        assert interval["low"] <= variant["rank"] <= interval["high"]
    assert suite["rank_uncertainty"]["units"] == "scenarios"
    first = suite["entries"][0]
    assert first["suite_passed"] and first["rank_interval"] == {"low": 1, "high": 1}
    assert all(e["not_separable_from"] for e in suite["entries"][1:])


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


def test_the_typed_bodies_serve_what_the_read_side_builds(evaluated: Server) -> None:
    """Same keys, same values, same JSON number types as `evalq.read` and `Client.get_result`."""
    client = evaluated.client("read")
    expected: dict[str, Any] = {}
    with session_scope(evaluated.db_url) as session:
        for task_id in TASKS:
            reads = {
                "leaderboard": leaderboard(session, task_id=task_id),
                "baseline": baseline_report(session, task_id=task_id),
                "variants": variant_report(session, task_id=task_id),
                "suite": suite_report(session, task_id=task_id),
            }
            expected |= {
                f"/v1/tasks/{task_id}/{name}": found.model_dump(mode="json")
                for name, found in reads.items()
            }
        models = ["claude-sonnet-4", "gpt-4o"]
        expected |= {
            "/v1/compare?tasks=scylla-token-bucket&by=variant": compare(
                session, tasks="scylla-token-bucket", by="variant"
            ).model_dump(mode="json"),
            "/v1/compare?tasks=suite-*&by=model&values=claude-sonnet-4&values=gpt-4o": compare(
                session, tasks="suite-*", by="model", values=models
            ).model_dump(mode="json"),
        }
    reader = Client()
    try:
        for sid in ("arena-fe-01", "scylla-T0-run0", "suite-02-prompt-leak"):
            expected[f"/v1/submissions/{sid}"] = reader.get_result(sid)
    finally:
        reader.app.close()
    for path, built in expected.items():
        served = client.get(path).raise_for_status().json()
        as_json = json.dumps(built, sort_keys=True)
        assert json.dumps(served, sort_keys=True) == as_json, path


def test_compare_refuses_a_bad_request_naming_the_field(evaluated: Server) -> None:
    client = evaluated.client("read")
    bad_by = client.get("/v1/compare", params={"tasks": TASKS[1], "by": "colour"})
    assert bad_by.status_code == 422
    assert bad_by.json()["detail"] == [
        {"field": "by", "rule": "one of model, tool, variant, or metadata.KEY"}
    ]
    one = client.get("/v1/compare", params={"tasks": TASKS[0], "by": "model", "values": "o3"})
    assert one.status_code == 422
    (problem,) = one.json()["detail"]
    assert problem["field"] == "values" and "two or more" in problem["rule"]
    missing = client.get("/v1/compare", params={"by": "model"})
    assert missing.status_code == 422 and missing.json()["detail"][0]["field"] == "tasks"
    unknown = client.get("/v1/compare", params={"tasks": "x", "by": "model"})
    assert unknown.status_code == 422 and unknown.json()["detail"][0]["field"] == "tasks"


def test_accepting_a_flagged_run_puts_it_back_into_the_baseline(evaluated: Server) -> None:
    # last in this module: it changes the task's baseline
    path = "/v1/submissions/arena-fe-09/review/accept"
    because = {"reason": "its logs show a real cached build"}
    assert evaluated.client("read").post(path, json=because).status_code == 403
    board = evaluated.client("read").get(f"/v1/tasks/{TASKS[0]}/leaderboard").json()
    flagged = next(e for e in board["entries"] if e["submission_id"] == "arena-fe-09")
    assert flagged["review"] == "flagged" and len(flagged["flags"]) >= 2
    for body in (None, {}, {"reason": ""}, {"reason": " \n "}, {"reason": "x" * 501}):
        refused = evaluated.client("write").post(path, json=body)
        assert refused.status_code == 422, (body, refused.text)
        assert refused.json()["detail"] == [{"field": "reason", "rule": REASON_RULE}]
    extra = evaluated.client("write").post(path, json=because | {"by": "someone else"})
    assert extra.status_code == 422 and extra.json()["detail"][0]["field"] == "(root)"
    unchanged = evaluated.client("read").get("/v1/submissions/arena-fe-09").json()
    assert (unchanged["review"], unchanged["review_decisions"]) == ("flagged", [])

    reader = evaluated.client("read")
    board_path = f"/v1/tasks/{TASKS[0]}/leaderboard"
    before = reader.get(board_path, params={"limit": 5}).json()
    assert (
        reader.get(board_path, params={"limit": 5, "cursor": before["next_cursor"]}).json()[
            "board_moved"
        ]
        is False
    )
    browser = evaluated.client()
    assert sign_in(browser, evaluated.keys["rw"]).status_code == 303
    ui_page = browser.get(f"/ui/tasks/{TASKS[0]}", params={"per": 5})
    assert ui_page.status_code == 200
    (next_link,) = re.findall(r'<a rel="next" href="([^"]+)"', ui_page.text)
    assert "cursor=" in next_link and 'id="board-moved"' not in ui_page.text
    assert 'id="board-moved"' not in browser.get(html.unescape(next_link)).text

    accepted = evaluated.client("write").post(path, json=because)
    assert accepted.status_code == 200, accepted.text
    # the accept moved the board: a page read with the cursor of a page before it says so
    moved = reader.get(board_path, params={"limit": 5, "cursor": before["next_cursor"]}).json()
    assert moved["board_moved"] is True and moved["offset"] == 5
    shown = browser.get(html.unescape(next_link))
    assert shown.status_code == 200 and 'id="board-moved"' in shown.text
    body = accepted.json()
    assert body["review"] == "accepted" and body["baseline_version"] > board["baseline_version"]
    assert body["changed"] is True
    assert (body["decision"]["action"], body["decision"]["by"]) == ("accept", "write")
    assert body["decision"]["reason"] == because["reason"]
    baseline = evaluated.client("read").get(f"/v1/tasks/{TASKS[0]}/baseline").json()
    assert baseline["version"] == body["baseline_version"]
    assert baseline["baseline"]["submission_count"] == 12
    ranked = evaluated.client("read").get(f"/v1/tasks/{TASKS[0]}/leaderboard").json()
    first = ranked["entries"][0]  # accepted, it ranks
    assert (first["submission_id"], first["rank"], first["held"]) == ("arena-fe-09", 1, False)
    not_flagged = evaluated.client("write").post(
        "/v1/submissions/arena-fe-01/review/accept", json=because
    )
    assert not_flagged.status_code == 422 and "review" in not_flagged.text

    undo = "/v1/submissions/arena-fe-09/review/unaccept"
    assert evaluated.client("read").post(undo, json=because).status_code == 403
    assert evaluated.client("write").post(undo, json={}).status_code == 422
    undone = evaluated.client("write").post(undo, json={"reason": "the cache was the test's"})
    assert undone.status_code == 200, undone.text
    assert (undone.json()["review"], undone.json()["changed"]) == ("flagged", True)
    again = evaluated.client("read").get(f"/v1/tasks/{TASKS[0]}/baseline").json()
    assert again["baseline"]["submission_count"] == 11  # held again: out of the baseline
    held = evaluated.client("read").get(f"/v1/tasks/{TASKS[0]}/leaderboard").json()
    entry = next(e for e in held["entries"] if e["submission_id"] == "arena-fe-09")
    assert (entry["rank"], entry["held"]) == (None, True)
    shown = evaluated.client("read").get("/v1/submissions/arena-fe-09").json()
    assert [(d["action"], d["by"], d["reason"]) for d in shown["review_decisions"]] == [
        ("unaccept", "write", "the cache was the test's"),
        ("accept", "write", because["reason"]),
    ]
