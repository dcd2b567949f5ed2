"""GET /v1/gate, `HttpClient.gate` (sync and async) and `Client.gate` over one store: one answer;
JUnit that validates against the schema CI systems read; a suite whose gate now blocks fails;
several tasks get an overall decision; the CI example runs green against a real `evalq api`.

The gate's statistics are tested on the bundled examples in tests/integration/read/test_gate.py;
here the store is written in bulk (`tests.support.compare_store`): six Arena tasks on which the
candidate spends ten times the baseline's tokens and time (each task regresses, and so do the
tasks taken together), a suite run whose gate blocks against one that passed, and a task with
two runs a side (too few).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from lxml import etree

from evalq.core.errors import InvalidInput
from evalq.core.schemas import Submission, Task
from evalq.producer.cli import EXAMPLES
from evalq.producer.http import AsyncHttpClient, HttpClient
from evalq.read.gate import GateReport
from evalq.report.gate_files import junit
from evalq.service.client import Client
from evalq.store.db import session_scope
from evalq.store.keys import create_key
from tests.integration.api.conftest import ROOT, TASK, Server, serve_api, submission
from tests.integration.conftest import REDIS_TEST_DB
from tests.support.compare_store import add_evaluated, bulk_submission, put_tasks
from tests.support.databases import fresh_database, private_redis
from tests.support.processes import PATIENCE, free_port, process_env, start, stop, wait_for_http
from tests.support.settings import configure, pipeline_settings

SCHEMA = etree.XMLSchema(etree.parse(Path(__file__).parents[2] / "support" / "junit.xsd"))
ARENA = [f"a{i}" for i in range(1, 7)]
SUITE = "suite-refund-agent"


def _worse(run: Submission, sid: str, factor: float) -> Submission:
    usage = run.usage.model_dump(exclude_none=True)
    usage.pop("total_tokens", None)
    for figure in ("input_tokens", "output_tokens", "execution_time"):
        usage[figure] = usage[figure] * factor
    usage["input_tokens"], usage["output_tokens"] = (
        int(usage["input_tokens"]),
        int(usage["output_tokens"]),
    )
    return Submission.model_validate(
        run.model_dump() | {"id": sid, "model": "cand", "usage": usage}
    )


def fill(db_url: str) -> None:
    """a1-a6: 6 runs a side, the candidate's at 10x the usage; f1: 2 runs a side; the suite:
    its release candidate (passes) as the baseline, the prompt-leak run (blocks) as the
    candidate."""
    tasks = {t: Task(id=t, kind="arena") for t in [*ARENA, "f1"]}
    definitions = json.loads((EXAMPLES / "tasks.json").read_text())
    tasks[SUITE] = Task.model_validate(next(t for t in definitions if t["id"] == SUITE))
    runs = []
    for number, task_id in enumerate([*ARENA, "f1"], start=1):
        for n in range(2 if task_id == "f1" else 6):
            base = bulk_submission(f"{task_id}-b{n}", task_id, model="base", seed=n + 10 * number)
            runs += [base, _worse(base, f"{task_id}-c{n}", 10 if task_id != "f1" else 1.01)]
    lines = (EXAMPLES / "suite.jsonl").read_text().splitlines()
    passed, blocked = (json.loads(line) for line in lines[:2])
    runs += [
        Submission.model_validate(passed | {"model": "base"}),
        Submission.model_validate(blocked | {"model": "cand"}),
    ]
    with session_scope(db_url) as session:
        put_tasks(session, list(tasks.values()))
    with session_scope(db_url) as session:
        add_evaluated(session, tasks, runs)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with fresh_database("sqlite", tmp_path_factory.mktemp("gate")) as db_url:
        fill(db_url)
        yield db_url


@pytest.fixture(scope="module")
def api(store: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """`evalq api` over the store: its URL and a read key."""
    directory = tmp_path_factory.mktemp("api")
    with private_redis(REDIS_TEST_DB) as redis_url:
        env = process_env(pipeline_settings(store, redis_url))
        with session_scope(store) as session:
            key = create_key(session, name="r", scopes=["read"])
        port = free_port()
        args = ["api", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
        process = start(args, env, directory / "api.log", cwd=directory)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_for_http(f"{url}/healthz", process, timeout=90, what="evalq api", ok=(200, 503))
            yield url, key
        finally:
            stop(process)


def _get(api: tuple[str, str], **params: Any) -> httpx.Response:
    url, key = api
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=url, headers=headers, timeout=60 * PATIENCE) as client:
        return client.get("/v1/gate", params=params)


def _valid(xml: str) -> etree._Element:
    root = etree.fromstring(xml.encode())
    SCHEMA.assertValid(root)
    return root


def test_every_door_answers_the_same_regression_with_an_overall_decision(
    api: tuple[str, str], store: str
) -> None:
    params = {"tasks": "a*", "by": "model", "baseline": "base", "candidate": "cand"}
    answer = _get(api, **params)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["verdict"] == "regression" and body["exit_status"] == 1
    assert [t["task"] for t in body["tasks"]] == ARENA
    assert {t["verdict"] for t in body["tasks"]} == {"regression"}
    # the tasks taken together: a paired comparison over the six tasks, also a regression
    overall = body["overall"]
    assert overall["pairs"] == len(ARENA) and overall["test"]["paired"] is True
    assert body["overall_verdict"] == "regression" and "over the tasks" in body["message"]
    url, key = api
    gate_args = {"by": "model", "baseline": "base", "candidate": "cand"}
    with HttpClient(url, key) as http:
        assert http.gate("a*", **gate_args) == body

    async def through_aio() -> dict[str, Any]:
        async with AsyncHttpClient(url, key) as client:
            return await client.gate("a*", **gate_args)

    assert asyncio.run(through_aio()) == body
    with pytest.MonkeyPatch.context() as monkeypatch:
        configure(monkeypatch, database_url=store)
        assert Client().gate("a*", **gate_args) == body
    root = _valid(junit(GateReport.model_validate(body)))
    failures = list(root.iter("failure"))
    assert len(failures) == len(ARENA)
    assert all("interval [" in f.attrib["message"] for f in failures)


def test_a_suite_whose_gate_now_blocks_fails_the_gate(api: tuple[str, str]) -> None:
    answer = _get(api, tasks=SUITE, by="model", baseline="base", candidate="cand")
    assert answer.status_code == 200, answer.text
    report = GateReport.model_validate(answer.json())
    (task,) = report.tasks
    assert report.verdict == "regression" and report.exit_status == 1
    assert task.verdict == "regression"
    assert "required scenario SEC-002 failed" in task.blocking
    # the scenarios alone do not decide it: eleven pairs, one worse
    assert task.adjusted_p is not None and task.adjusted_p > report.alpha
    root = _valid(junit(report))
    (failure,) = root.iter("failure")
    assert "the suite gate now blocks" in failure.attrib["message"]
    # the baseline against itself the other way round: the release candidate does not block
    answer = _get(api, tasks=SUITE, by="model", baseline="cand", candidate="base")
    reverse = GateReport.model_validate(answer.json())
    assert reverse.tasks[0].blocking == [] and reverse.verdict == "pass"


def test_too_few_is_a_failure_or_a_skip_and_validates_either_way(api: tuple[str, str]) -> None:
    common = {"tasks": "f1", "by": "model", "baseline": "base", "candidate": "cand"}
    failed = GateReport.model_validate(_get(api, **common).json())
    assert failed.verdict == "too few" and failed.exit_status == 3
    root = _valid(junit(failed))
    assert next(root.iter("failure")).attrib["type"] == "too few"
    passed = GateReport.model_validate(_get(api, **common, too_few="pass").json())
    assert passed.verdict == "pass" and passed.exit_status == 0
    root = _valid(junit(passed))
    assert next(root.iter("testsuite")).attrib["skipped"] == "1"
    assert root.find(".//failure") is None and root.find(".//skipped") is not None


def test_the_schema_refuses_what_ci_systems_cannot_read() -> None:
    """The schema is not always-true: a testcase without a name, or a suite without its
    counts, is refused."""
    with pytest.raises(etree.DocumentInvalid):
        _valid(
            '<testsuites><testsuite name="s" tests="1" failures="0" errors="0">'
            "<testcase/></testsuite></testsuites>"
        )
    with pytest.raises(etree.DocumentInvalid):
        _valid('<testsuites><testsuite name="s"><testcase name="t"/></testsuite></testsuites>')


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"candidate": "base"}, "candidate"),
        ({"margin": "-1"}, "margin"),
        ({"margin": "inf"}, "margin"),  # would pass any regression (the fifth probe, G-8)
        ({"margin": "1e999"}, "margin"),
        ({"margin": "-inf"}, "margin"),
        ({"margin": "nan"}, "margin"),
        ({"too_few": "maybe"}, "too_few"),
    ],
)
def test_unusable_input_is_refused_at_the_route_and_by_the_http_client(
    api: tuple[str, str], params: dict[str, str], field: str
) -> None:
    request = {"tasks": "a*", "by": "model", "baseline": "base", "candidate": "cand"} | params
    answer = _get(api, **request)
    assert answer.status_code == 422, answer.text
    assert field in [p["field"] for p in answer.json()["detail"]]
    url, key = api
    request.pop("tasks")
    if "margin" in request:
        request["margin"] = float(request["margin"])
    with HttpClient(url, key) as http, pytest.raises(InvalidInput) as raised:
        http.gate("a*", **request)
    assert field in [name for name, _ in raised.value.problems]


def test_the_ci_example_runs_green_against_a_real_api(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The composite action's shell (examples/ci/gate.py): submit, wait, gate, both files.

    The candidate's runs are the baseline's a little faster (better or equal on every Arena
    dimension), so the gate passes; each side has five runs, enough to decide. The task's
    criteria need the named test to pass (criteria an empty output meets leave a task
    unverified, and the gate fails on it: docs/audit.md)."""
    directory = tmp_path_factory.mktemp("ci")
    sound = TASK | {"success_criteria": [{"type": "tests_pass", "tests": ["test_parse"]}]}
    evidence = {"tests": [{"name": "test_parse", "passed": True}]}
    runs = []
    for n in range(5):
        usage = {"input_tokens": 800 + 40 * n, "output_tokens": 200, "tool_calls": 3 + n}
        # a second faster: within 3.5% on every figure, a same-output run is a near-copy of
        # the other side's (docs/scoring.md), and the gate would count one run too few
        for commit, seconds in (("base", 12.0 + n), ("cand", 11.0 + n)):
            runs.append(
                submission(
                    f"ci-{commit}-{n}",
                    usage=usage | {"execution_time": seconds},
                    metadata={"commit": commit},
                    evidence=evidence,
                )
            )
    (directory / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    with serve_api("sqlite", directory, broker=False) as server:
        assert server.client().put("/v1/tasks/t1", json=sound).status_code == 200
        completed = _run_example(server, directory)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stdout.startswith("pass: cand against base over 1 task(s)")
    root = _valid((directory / "evalq-gate.xml").read_text())
    (case,) = root.iter("testcase")
    assert case.attrib["name"] == "t1" and case.find("failure") is None
    assert "### evalq gate: PASS" in (directory / "evalq-gate.md").read_text()


def _run_example(server: Server, directory: Path) -> subprocess.CompletedProcess[str]:
    """The composite action's shell step, its inputs filled in, run by bash."""
    action = ROOT / ".github" / "actions" / "evalq-gate"
    steps = yaml.safe_load((action / "action.yml").read_text())["runs"]["steps"]
    (step,) = [s for s in steps if s.get("shell") == "bash"]
    inputs = {
        "runs": "runs.jsonl",
        "tasks": "t1",
        "by": "metadata.commit",
        "baseline": "base",
        "candidate": "cand",
        "margin": "0",
        "too-few": "fail",
        "api-url": server.url,
        "api-key": server.keys["rw"],
    }

    def filled(text: str) -> str:
        text = text.replace("${{ github.action_path }}", str(action))
        return re.sub(r"\$\{\{ inputs\.([a-z-]+) \}\}", lambda m: inputs[m.group(1)], text)

    env = {
        **os.environ,
        **{name: filled(value) for name, value in step["env"].items()},
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),
    }
    return subprocess.run(
        ["bash", "-e", "-c", filled(step["run"])],
        cwd=directory,
        env=env,
        capture_output=True,
        text=True,
        timeout=600 * PATIENCE,
        check=False,
    )
