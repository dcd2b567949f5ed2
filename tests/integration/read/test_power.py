"""`evalq plan` / GET /v1/tasks/{id}/plan / `Client.plan` on the bundled examples: one plan at
every door, counts from the task's own noise, and "underpowered" beside a comparison short of it."""

from __future__ import annotations

import json
import math
import statistics

import pytest
from fastapi.testclient import TestClient
from tests.support.settings import configure
from typer.testing import CliRunner

from evalq.core.settings import Settings
from evalq.producer.api.app import create_app
from evalq.producer.cli import app
from evalq.read.compare import compare
from evalq.read.power import task_plan
from evalq.read.view import task_view
from evalq.stats.power import pairs_needed
from evalq.store.db import session_scope
from evalq.store.keys import create_key

SCYLLA = "scylla-token-bucket"


def test_the_scylla_plan_pools_the_variants_noise(store: str) -> None:
    with session_scope(store) as session:
        plan = task_plan(session, task_id=SCYLLA, detect=0.1)
        view = task_view(session, task_id=SCYLLA)
    by_variant: dict[str, list[float]] = {}
    for row in view.rows:
        if not row.held and row.values.scylla_composite is not None:
            by_variant.setdefault(row.submission.variant or "", []).append(
                row.values.scylla_composite
            )
    squares = sum(statistics.variance(v) * (len(v) - 1) for v in by_variant.values())
    sd = math.sqrt(squares / sum(len(v) - 1 for v in by_variant.values()))
    assert plan.groups_by == "variant" and plan.spread == "within groups"
    assert plan.sd is not None and math.isclose(plan.sd, sd)
    assert plan.alpha == 0.05 and plan.detect_source == "request"
    assert plan.runs == pairs_needed(sd=math.sqrt(2) * sd, detect=0.1, alpha=0.05)
    assert plan.runs is not None and plan.runs > 10  # the demo's 10 runs a variant are too few


def test_a_comparison_with_fewer_runs_than_the_plan_is_said_underpowered(store: str) -> None:
    with session_scope(store) as session:
        plan = task_plan(session, task_id=SCYLLA)
        found = compare(session, tasks=SCYLLA, by="variant")
    assert plan.detect_source == "default" and plan.detect == 0.1
    assert plan.runs is not None and plan.runs > 10
    for comparison in found.comparisons:
        said = [n for n in comparison.notes if n.startswith("underpowered")]
        assert said == [
            f"underpowered: 10 per side; detecting 0.1 with 80% power at alpha 0.05 needs "
            f"{plan.runs} (evalq plan {SCYLLA})"
        ]


def test_a_difference_the_runs_can_detect_is_not_said_underpowered(store: str) -> None:
    with session_scope(store) as session:
        plan = task_plan(session, task_id=SCYLLA, detect=1.0)
    assert plan.runs is not None and plan.runs <= 10


def test_every_door_serves_one_plan_and_refuses_a_bad_detect(
    store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalq.service.client import Client

    configure(monkeypatch, database_url=store)
    with session_scope(store) as session:
        expected = task_plan(session, task_id=SCYLLA, detect=0.2)
        key = create_key(session, name="planner", scopes=["read"])
    settings = Settings(database_url=store, auth_required=True)
    headers = {"Authorization": f"Bearer {key}"}
    with TestClient(create_app(settings)) as http:
        served = http.get(f"/v1/tasks/{SCYLLA}/plan", params={"detect": 0.2}, headers=headers)
        bad = http.get(f"/v1/tasks/{SCYLLA}/plan", params={"detect": -1}, headers=headers)
        missing = http.get("/v1/tasks/no-such-task/plan", headers=headers)
    assert served.status_code == 200 and served.json() == expected.model_dump(mode="json")
    assert bad.status_code == 422 and "detect" in bad.text
    assert missing.status_code == 404
    assert Client(settings).plan(SCYLLA, detect=0.2) == expected
    result = CliRunner().invoke(
        app, ["plan", SCYLLA, "--detect", "0.2", "--json"], env={"EVALQ_DATABASE_URL": store}
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == expected.model_dump(mode="json")
    refused = CliRunner().invoke(
        app, ["plan", SCYLLA, "--detect", "0"], env={"EVALQ_DATABASE_URL": store}
    )
    assert refused.exit_code == 2 and "detect" in refused.output
