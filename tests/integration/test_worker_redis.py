"""The test harness's own services end with the process that started them (issue 43).

A stressed CI run left an xdist worker's `redis-server` running after the suite ended: the
worker had exited without running its exit handlers. Here a process stands in for such a worker:
it starts its Redis as a worker does (importing `tests.support.services` under a worker id),
then ends by ``os._exit``, so no `atexit` handler runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.processes import wait_until
from tests.support.services import REDIS_HOST, reachable

ROOT = Path(__file__).resolve().parents[2]
WORKER = """
import os
import tests.support.services as services
print(services.REDIS_PORT, flush=True)
os._exit(0)
"""


def test_a_workers_redis_ends_with_a_worker_that_skips_its_exit_handlers() -> None:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (.ci/run installs it)")
    env = {k: v for k, v in os.environ.items() if k != "EVALQ_TEST_REDIS_PORT"}
    env |= {"PYTEST_XDIST_WORKER": "gw-harness", "PYTHONPATH": str(ROOT)}
    # its stderr not a pipe: the server inherits it, and a pipe would stay open while it runs
    done = subprocess.run(
        [sys.executable, "-c", WORKER],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        check=True,
    )
    port = int(done.stdout.strip())
    try:
        wait_until(
            lambda: not reachable(REDIS_HOST, port),
            timeout=30,
            what=f"the ended worker's redis-server on {port} to end with it",
        )
    finally:  # on the old harness the server outlives the worker: do not leave it behind
        if reachable(REDIS_HOST, port):
            subprocess.run(["redis-cli", "-p", str(port), "shutdown", "nosave"], check=False)
