"""The test PgBouncer (tests/support/pgbouncer.py) ends with the test process that started it,
however that process ends: a pytest-xdist worker killed by a signal runs no `atexit`, and
each left PgBouncer kept a port and two server connections per database until the machine
was restarted."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.pgbouncer import pgbouncer_binary
from tests.support.processes import PATIENCE
from tests.support.services import PG_HOST, PG_PORT, need, reachable

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
STARTS = (
    "import time\n"
    "from tests.support.pgbouncer import pgbouncer_port\n"
    "print(pgbouncer_port(), flush=True)\n"
    "time.sleep(600)\n"
)


@pytest.mark.parametrize("end", [signal.SIGKILL, signal.SIGTERM])
def test_a_test_process_that_dies_takes_its_pgbouncer_with_it(end: signal.Signals) -> None:
    need(PG_HOST, PG_PORT, "PostgreSQL")
    if pgbouncer_binary() is None:
        pytest.skip("pgbouncer is not installed (.ci/run installs Debian's)")
    with subprocess.Popen(
        [sys.executable, "-c", STARTS], cwd=ROOT, stdout=subprocess.PIPE, text=True
    ) as child:
        assert child.stdout is not None
        port = int(child.stdout.readline())
        assert reachable("127.0.0.1", port)
        child.send_signal(end)
        child.wait(30 * PATIENCE)
    deadline = time.monotonic() + 10 * PATIENCE  # the watcher polls once a second
    while reachable("127.0.0.1", port) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not reachable("127.0.0.1", port)
