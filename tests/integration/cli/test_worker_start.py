"""Starting `evalq worker`: a missing worker extra stops it, and workers get distinct names.

The workers are real subprocesses on the test Redis database; a module of the `worker` extra is
made missing by setting ``sys.modules[name] = None`` before evalq runs, which is how Python
itself marks a module that must not be imported.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from evalq.core.settings import Settings
from evalq.workers.app import make_app
from evalq.workers.names import QUEUES
from tests.integration.conftest import REDIS_TEST_DB
from tests.support.databases import private_redis
from tests.support.processes import PATIENCE, process_env, start, stop, wait_until
from tests.support.settings import pipeline_settings

ROOT = Path(__file__).resolve().parents[3]
INSTALL = "pip install 'evalq[worker]' --extra-index-url https://download.pytorch.org/whl/cpu"


def run_evalq_without(module: str, args: list[str], env: dict[str, str], cwd: Path) -> str:
    """Run ``evalq ARGS`` with ``module`` missing; returns stderr, asserting exit status 2."""
    code = (
        f"import sys; sys.modules[{module!r}] = None; sys.argv = ['evalq', *{args!r}]; "
        "from evalq.producer.cli import main; main()"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60 * PATIENCE,
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    return done.stderr


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Settings (no prefix) for a SQLite store and the test Redis database as the broker."""
    with private_redis(REDIS_TEST_DB) as redis_url:
        yield pipeline_settings(f"sqlite:///{tmp_path / 'evalq.db'}", redis_url)


@pytest.mark.parametrize(
    ("module", "queues"),
    [("torch", "evalq.text"), ("transformers", "evalq.text,evalq.merge"), ("pydantic_ai", None)],
)
def test_a_worker_without_the_worker_extra_stops_at_start_with_the_install_command(
    module: str, queues: str | None, broker: dict[str, str], tmp_path: Path
) -> None:
    args = ["worker", "--pool=solo"] + ([f"--queues={queues}"] if queues else [])
    stderr = run_evalq_without(module, args, process_env(broker), tmp_path)
    named = ", ".join(queues.split(",") if queues else QUEUES)
    assert f"evalq worker needs the worker extra for {named} " in stderr
    assert f"(missing: {module})" in stderr
    assert stderr.strip().endswith(INSTALL)


def test_the_demo_without_the_worker_extra_stops_before_submitting(tmp_path: Path) -> None:
    env = process_env({"database_url": f"sqlite:///{tmp_path / 'evalq.db'}"})  # no broker
    stderr = run_evalq_without("torch", ["demo"], env, tmp_path)
    assert "evalq demo needs the worker extra" in stderr and INSTALL in stderr
    assert not (tmp_path / "evalq.db").exists()  # nothing was stored


def test_a_worker_on_queues_it_can_run_starts_without_the_extra(
    broker: dict[str, str], tmp_path: Path
) -> None:
    """graph and merge need no module of the extra: a slim image can run them."""
    code = (
        "import sys; sys.modules['torch'] = sys.modules['pydantic_ai'] = None; "
        "from evalq.workers.bootstrap import missing_worker_modules; "
        "print(missing_worker_modules(['evalq.graph', 'evalq.merge']), "
        "missing_worker_modules(['evalq.text', 'evalq.judge']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=process_env(broker), capture_output=True, text=True
    )
    assert done.stdout.split() == ["[]", "['torch',", "'pydantic_ai']"], done.stderr


def compose_worker_healthcheck() -> str:
    """The Python code of docker-compose.yml's worker healthcheck (``x-worker-health``)."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    test: list[str] = compose["x-worker-health"]["test"]
    assert test[:3] == ["CMD", "python", "-c"]
    return test[3]


def test_workers_on_different_queues_answer_under_distinct_names(
    broker: dict[str, str], tmp_path: Path
) -> None:
    host = socket.gethostname()
    env = process_env(broker)
    commands = {
        f"graph@{host}": ["--queues=evalq.graph"],
        f"graph-merge@{host}": ["--queues=evalq.graph,evalq.merge"],
        f"merge1@{host}": ["--queues=evalq.merge", "--hostname=merge1@%h"],  # still overrides
    }
    app = make_app(Settings(**broker))
    workers = [
        start(["worker", "--pool=solo", *args], env, tmp_path / f"w{i}.log")
        for i, args in enumerate(commands.values())
    ]
    try:

        def names() -> list[str]:
            return [name for reply in app.control.ping(timeout=1) for name in reply]

        wait_until(lambda: len(names()) >= 3, timeout=60, what="three workers to answer a ping")
        assert sorted(names()) == sorted(commands)
        healthcheck = subprocess.run(
            [sys.executable, "-c", compose_worker_healthcheck()],
            env=env,
            capture_output=True,
            text=True,
            timeout=60 * PATIENCE,
        )
        assert healthcheck.returncode == 0, healthcheck.stderr
    finally:
        for worker in workers:
            stop(worker)
        app.close()


def test_the_compose_healthcheck_fails_when_no_worker_on_this_host_answers(
    broker: dict[str, str],
) -> None:
    healthcheck = subprocess.run(
        [sys.executable, "-c", compose_worker_healthcheck()],
        env=process_env(broker),
        capture_output=True,
        text=True,
        timeout=60 * PATIENCE,
    )
    assert healthcheck.returncode == 1, healthcheck.stderr
