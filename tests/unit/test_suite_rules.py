"""The suite's own rules (tests/conftest.py, README "Development"): which cases run on
PostgreSQL, and that parallel workers get Redis servers of their own."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from tests.support.processes import PATIENCE
from tests.support.services import REDIS_HOST, REDIS_PORT, WORKER, need

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
WHERE_THE_DATABASE_MATTERS = ("integration/store", "integration/queue")
"""Every test module under these carries the ``both_databases`` marker."""


def marked_both_databases(path: Path) -> bool:
    """True when the module's ``pytestmark`` names ``both_databases``."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
        ):
            names = {n.attr for n in ast.walk(node.value) if isinstance(n, ast.Attribute)}
            return "both_databases" in names
    return False


def collected(*args: str) -> list[str]:
    """Node ids ``pytest --collect-only`` lists for ``args``."""
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300 * PATIENCE,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return [line for line in result.stdout.splitlines() if "::" in line]


@pytest.mark.parametrize("directory", WHERE_THE_DATABASE_MATTERS)
def test_every_module_where_the_database_matters_runs_on_both(directory: str) -> None:
    modules = sorted((TESTS / directory).glob("test_*.py"))
    assert modules
    unmarked = [m.name for m in modules if not marked_both_databases(m)]
    assert not unmarked, f"{directory}: mark these pytest.mark.both_databases: {unmarked}"


def test_postgresql_variants_run_only_where_the_database_matters() -> None:
    store = "tests/integration/store/test_durability.py"  # marked
    secrets = "tests/integration/test_secrets.py"  # not marked: sqlite only
    ids = collected(store, secrets)
    assert any(i.startswith(store) and "[postgresql" in i for i in ids)
    assert any(i.startswith(store) and "[sqlite" in i for i in ids)
    assert any(i.startswith(secrets) and "[sqlite" in i for i in ids)
    assert not any(i.startswith(secrets) and "[postgresql" in i for i in ids)
    every = collected(secrets, "--both-databases")
    assert any("[postgresql" in i for i in every)


def test_xdist_workers_each_start_a_redis_server_of_their_own(tmp_path: Path) -> None:
    """Two workers, each reporting the Redis port its tests use: two servers, not 6379."""
    probe = "tests/unit/test_suite_rules.py::test_this_process_redis_answers"
    env = os.environ | {"EVALQ_SUITE_PROBE": str(tmp_path)}
    env.pop("EVALQ_TEST_REDIS_PORT", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    args = ["-n", "2", "--dist", "each", "-p", "no:cacheprovider", "-q", probe]  # on both
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300 * PATIENCE,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    ports = {report.name: int(report.read_text()) for report in tmp_path.iterdir()}
    assert set(ports) == {"gw0", "gw1"}, ports
    assert ports["gw0"] != ports["gw1"] and 6379 not in ports.values(), ports


def test_this_process_redis_answers() -> None:
    need(REDIS_HOST, REDIS_PORT, "Redis")
    with redis.Redis(host=REDIS_HOST, port=REDIS_PORT) as client:
        assert client.ping()
    if WORKER:
        assert REDIS_PORT != 6379  # a worker's own server, never the shared one
    if "EVALQ_SUITE_PROBE" in os.environ:
        (Path(os.environ["EVALQ_SUITE_PROBE"]) / (WORKER or "main")).write_text(str(REDIS_PORT))


def test_a_worker_takes_a_module_whole_the_drills_together_and_benchmarks_one_by_one() -> None:
    from tests.conftest import scope_of

    api = "tests/integration/api/test_api_auth.py"
    assert scope_of(f"{api}::test_a[sqlite]") == scope_of(f"{api}::test_b[sqlite]") == api
    kill, lost = "tests/drills/test_kill9.py::test_x", "tests/drills/test_lost_worker.py::test_y"
    flush = "tests/drills/test_broker_flush.py::test_z"
    restart = "tests/drills/test_broker_restart.py::test_w"
    assert scope_of(kill) == scope_of(lost) == scope_of(flush) == scope_of(restart)  # one chain
    bench = "tests/integration/test_benchmarks.py::test_the_benchmark_runs_in_its_quick_mode"
    assert scope_of(f"{bench}[memory.py]") != scope_of(f"{bench}[ingest.py]")


HTTPX_CALLS = {"get", "put", "post", "patch", "delete", "head", "options", "request", "stream"}
"""httpx's one-shot request functions; its clients are `Client` and `AsyncClient`."""


def httpx_calls_without_timeout(path: Path) -> list[int]:
    """Lines in ``path`` calling an `httpx` request function or client without ``timeout=``."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "httpx"
            and node.func.attr in HTTPX_CALLS | {"Client", "AsyncClient"}
            and not any(keyword.arg == "timeout" for keyword in node.keywords)
        ):
            lines.append(node.lineno)
    return lines


def test_every_http_request_of_the_suite_and_the_benchmarks_names_its_timeout() -> None:
    # httpx waits 5 s by default: a busy machine broke a benchmark's smoke run on it (issue 43)
    missing = [
        f"{path.relative_to(ROOT)}:{line}"
        for directory in ("tests", "bench", "examples")
        for path in sorted((ROOT / directory).rglob("*.py"))
        for line in httpx_calls_without_timeout(path)
    ]
    assert missing == [], "name a timeout (tests.support.processes.HTTP_TIMEOUT): " + ", ".join(
        missing
    )
