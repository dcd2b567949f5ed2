"""GET /v1/compare and `evalq compare` within limits: every request over one is refused with a
422 that names the limit and the parameter, and a request that cannot be answered is refused
before any evaluation is loaded."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import event
from typer.testing import CliRunner

from evalq.core.errors import InvalidInput
from evalq.core.schemas import Task
from evalq.core.settings import Settings
from evalq.producer.cli import app
from evalq.read.compare import compare
from evalq.store.db import engine_for, session_scope
from evalq.store.keys import create_key
from tests.integration.conftest import REDIS_TEST_DB
from tests.support.compare_store import add_evaluated, bulk_submission, put_tasks
from tests.support.databases import fresh_database, private_redis
from tests.support.processes import PATIENCE, free_port, process_env, start, stop, wait_for_http
from tests.support.settings import pipeline_settings

LIMITS = {
    "compare_max_tasks": "3",
    "compare_max_groups": "3",
    "compare_max_submissions": "40",
    "compare_max_units": "2",
}
TASKS = {
    **{f"a{i}": Task(id=f"a{i}", kind="arena") for i in range(1, 6)},
    "s1": Task(id="s1", kind="scylla"),
}


def fill(db_url: str) -> None:
    """a1, a2: 30 runs each; a3-a5: 2 each (models m0-m3 in turn); s1: variants T0-T4."""
    submissions = []
    for task_id, runs in (("a1", 30), ("a2", 30), ("a3", 4), ("a4", 4), ("a5", 4)):
        submissions += [
            bulk_submission(f"{task_id}-{n}", task_id, model=f"m{n % 4}", seed=n)
            for n in range(runs)
        ]
    submissions += [
        bulk_submission(f"s1-{n}", "s1", model="m0", seed=n, variant=f"T{n % 5}", run_index=n)
        for n in range(10)
    ]
    with session_scope(db_url) as session:
        put_tasks(session, list(TASKS.values()))
    with session_scope(db_url) as session:
        add_evaluated(session, TASKS, submissions)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    with fresh_database(request.param, tmp_path_factory.mktemp("limits")) as db_url:
        fill(db_url)
        yield db_url


@pytest.fixture(scope="module")
def api(store: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    """`evalq api` over the store with small compare limits, and a read key."""
    directory = tmp_path_factory.mktemp("api")
    with private_redis(REDIS_TEST_DB) as redis_url:
        env = process_env(pipeline_settings(store, redis_url, **LIMITS))
        with session_scope(store) as session:
            key = create_key(session, name="r", scopes=["read"])
        port = free_port()
        args = ["api", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
        process = start(args, env, directory / "api.log", cwd=directory)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_for_http(f"{url}/healthz", process, timeout=90, what="evalq api", ok=(200, 503))
            headers = {"Authorization": f"Bearer {key}"}
            with httpx.Client(base_url=url, headers=headers, timeout=60 * PATIENCE) as client:
                yield client
        finally:
            stop(process)


OVER = [
    ({"tasks": "a*", "by": "model", "values": ["m0", "m1"]}, "tasks", "compare_max_tasks"),
    (
        {"tasks": "a3", "by": "model", "values": ["m0", "m1", "m2", "m3"]},
        "values",
        "compare_max_groups",
    ),
    ({"tasks": "s1", "by": "variant"}, "values", "compare_max_groups"),
    (
        {"tasks": "a1,a2", "by": "model", "values": ["m0", "m1"]},
        "tasks",
        "compare_max_submissions",
    ),
    ({"tasks": "a3,a4,a5", "by": "model", "values": ["m0", "m1"]}, "tasks", "compare_max_units"),
]


@pytest.mark.parametrize(("params", "field", "limit"), OVER)
def test_a_request_over_a_limit_gets_a_422_naming_the_limit_and_the_parameter(
    api: httpx.Client, params: dict[str, Any], field: str, limit: str
) -> None:
    answer = api.get("/v1/compare", params=params)
    assert answer.status_code == 422, answer.text
    ((problem),) = answer.json()["detail"]
    assert problem["field"] == field
    assert limit in problem["rule"] and f"EVALQ_{limit.upper()}" in problem["rule"]
    assert f"at most {LIMITS[limit]}" in problem["rule"]


def test_a_request_within_the_limits_is_answered(api: httpx.Client) -> None:
    answer = api.get(
        "/v1/compare", params={"tasks": "a3,a4", "by": "model", "values": ["m0", "m1"]}
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["tasks"] == ["a3", "a4"]


def test_tasks_of_different_kinds_are_refused_before_any_evaluation_is_loaded(store: str) -> None:
    statements: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(statement)

    engine = engine_for(store)
    event.listen(engine, "before_cursor_execute", record)
    try:
        with session_scope(store) as session, pytest.raises(InvalidInput) as caught:
            compare(session, tasks="a3,s1", by="model", values=["m0", "m1"])
    finally:
        event.remove(engine, "before_cursor_execute", record)
    ((field, rule),) = caught.value.problems
    assert field == "tasks" and "rank by different scores" in rule
    assert statements  # the listener saw the checks ...
    assert not any("payload" in s for s in statements)  # ... and no submission was loaded


def test_the_limits_are_the_settings_given(store: str) -> None:
    roomy = Settings(database_url=store, compare_max_tasks=10)
    with session_scope(store) as session:
        found = compare(session, tasks="a*", by="model", values=["m0", "m1"], settings=roomy)
    assert found.tasks == ["a1", "a2", "a3", "a4", "a5"]


def test_the_cli_refuses_a_request_over_a_limit_naming_it(
    store: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("EVALQ_DATABASE_URL", store)
    for name, value in LIMITS.items():
        monkeypatch.setenv(f"EVALQ_{name.upper()}", value)
    from evalq.core.settings import get_settings

    get_settings.cache_clear()
    try:
        runner = CliRunner()
        over = runner.invoke(app, ["compare", "a*", "--by", "model", "m0", "m1"])
        assert over.exit_code != 0
        assert "tasks" in over.output and "EVALQ_COMPARE_MAX_TASKS" in over.output
        groups = runner.invoke(app, ["compare", "s1", "--by", "variant"])
        assert groups.exit_code != 0 and "EVALQ_COMPARE_MAX_GROUPS" in groups.output
        within = runner.invoke(app, ["compare", "a3,a4", "--by", "model", "m0", "m1", "--json"])
        assert within.exit_code == 0, within.output
    finally:
        get_settings.cache_clear()
