"""Prices with their source in GET /v1/submissions/{id}, and /metrics moving when evaluations
degrade: the real API process, the real pipeline (embedded worker), the real store and Redis."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import genai_prices
import pytest
from prometheus_client.parser import text_string_to_metric_families

from evalq.core.settings import get_settings
from evalq.service.client import Client
from evalq.workers.bootstrap import worker_app
from evalq.workers.embedded import embedded_worker
from tests.integration.api.conftest import Server, submission
from tests.support.openai_stub import OpenAIStub
from tests.support.processes import PATIENCE
from tests.support.reviews import review_task
from tests.support.settings import configure

REVIEW_OUTPUT = "A sparse attention method for long documents; the baselines are weak."
FAMILIES = (
    "evalq_evaluations",
    "evalq_tier_failures",
    "evalq_judge_retries",
    "evalq_judge_rate_limited",
    "evalq_judge_cost_usd",
    "evalq_queue_depth",
    "evalq_oldest_queued_age_seconds",
    "evalq_broker_up",
)


def evaluate(ids: list[str]) -> dict[str, str]:
    """Run an embedded worker until ``ids`` are evaluated."""
    app = worker_app()
    try:
        with embedded_worker(app, concurrency=4):
            return Client(app=app).wait(ids, timeout=180 * PATIENCE)
    finally:
        app.close()


def submit_without_a_worker(run: dict[str, Any]) -> None:
    """Store and enqueue ``run`` with this process's settings; nothing consumes it yet."""
    app = worker_app()
    try:
        Client(app=app).submit(run)
    finally:
        app.close()


def scrape(api: Server) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of GET /metrics, keyed by name and sorted labels; every family is there."""
    response = api.client("read").get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    families = list(text_string_to_metric_families(response.text))
    assert {f.name for f in families} >= set(FAMILIES)
    samples = {}
    for family in families:
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: dict[Any, float], name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_prices_and_their_source_are_returned_with_the_evaluation(api: Server) -> None:
    writer = api.client("write")
    usage = {"input_tokens": 1_000_000, "output_tokens": 100_000, "tool_calls": 2}
    runs = {
        "price-profile": submission("price-profile", model="gpt-4o", usage=usage),
        # not in the profile's table: priced by genai-prices ($0.40 / $1.60 per Mtok)
        "price-genai": submission("price-genai", model="gpt-4.1-mini", usage=usage),
        "price-reported": submission("price-reported", usage={**usage, "cost_usd": 0.5}),
        "price-unknown": submission("price-unknown", model="no-such-model-x", usage=usage),
    }
    posted = writer.post("/v1/submissions", json={"submissions": list(runs.values())})
    assert posted.status_code == 201, posted.text
    assert set(evaluate(list(runs)).values()) == {"done"}
    reader = api.client("read")
    read = {sid: reader.get(f"/v1/submissions/{sid}").json()["scores"] for sid in runs}

    assert read["price-profile"]["cost"] == {
        "usd": pytest.approx(5.0 + 1.5),
        "priced_by": {"origin": "profile", "entry": "gpt-4o", "version": None},
    }
    assert read["price-genai"]["cost"] == {
        "usd": pytest.approx(0.4 + 0.16),
        "priced_by": {
            "origin": "genai-prices",
            "entry": "openai:gpt-4.1-mini",
            "version": genai_prices.__version__,
        },
    }
    assert read["price-reported"]["cost"] == {
        "usd": 0.5,
        "priced_by": {"origin": "reported", "entry": None, "version": None},
    }
    assert read["price-unknown"]["cost"] is None


@pytest.fixture
def failing_text_and_a_rate_limited_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """This process's worker: a text model that cannot load, a judge that gets one 429 first.

    The judge is `OpenAIStub` under a name the profile prices ($1 / $2 per Mtok)."""
    broken = tmp_path / "not-a-model"
    profile = tmp_path / "broken.toml"
    profile.write_text(
        f'[text]\nmodel_path = "{broken}"\n\n'
        '[pricing."stub-judge"]\ninput_per_mtok = 1.0\noutput_per_mtok = 2.0\n'
    )
    with OpenAIStub(plan={"degrade": ["rate_limit"]}) as stub:
        configure(
            monkeypatch,
            profile_path=str(profile),
            judge_model="openai:stub-judge",
            judge_base_url=stub.base_url,
            judge_api_key="sk-test",
            judge_backoff_base_s="0.01",
        )
        try:
            yield
        finally:
            get_settings.cache_clear()


@pytest.mark.usefixtures("failing_text_and_a_rate_limited_judge")
def test_metrics_series_are_present_and_move_when_an_evaluation_degrades(api: Server) -> None:
    assert api.client(None).get("/metrics").status_code == 401
    before = scrape(api)
    assert value(before, "evalq_queue_depth", queue="evalq.text") == 0

    task = review_task("metrics-review")  # has references: the text tier runs (and fails)
    assert api.client("write").put(f"/v1/tasks/{task['id']}", json=task).status_code == 201
    run = submission("degrade-1", task_id=task["id"], output="[case:degrade] " + REVIEW_OUTPUT)
    submit_without_a_worker(run)
    waiting = scrape(api)
    assert value(waiting, "evalq_queue_depth", queue="evalq.text") == 1
    assert value(waiting, "evalq_queue_depth", queue="evalq.judge") == 1
    assert value(waiting, "evalq_evaluations", status="queued") == 1
    assert value(waiting, "evalq_oldest_queued_age_seconds") > 0

    assert evaluate(["degrade-1"]) == {"degrade-1": "degraded"}
    after = scrape(api)
    for name, labels in (
        ("evalq_evaluations", {"status": "degraded"}),
        ("evalq_tier_failures_total", {"tier": "text", "error": "InvalidInput"}),
        ("evalq_judge_retries_total", {"kind": "transport"}),
        ("evalq_judge_rate_limited_total", {}),
    ):
        assert value(after, name, **labels) == value(before, name, **labels) + 1, name
    assert value(after, "evalq_judge_cost_usd_total") > value(before, "evalq_judge_cost_usd_total")
    assert value(after, "evalq_broker_up") == 1
    assert value(after, "evalq_queue_depth", queue="evalq.text") == 0
    assert value(after, "evalq_evaluations", status="queued") == 0
    assert value(after, "evalq_oldest_queued_age_seconds") == 0
