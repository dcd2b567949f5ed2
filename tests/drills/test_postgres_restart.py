"""Drill 4: PostgreSQL restarted in the middle of a batch; tasks retry, nothing lost or doubled."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from tests.drills import harness
from tests.drills.batch import ids, submit_batch
from tests.support.processes import PATIENCE
from tests.support.services import PG_HOST, PG_PORT, reachable

N = 200


def cluster() -> tuple[str, str]:
    """(version, name) of the local PostgreSQL cluster, read from /etc/postgresql."""
    versions = sorted(Path("/etc/postgresql").glob("*/main"))
    if not versions:
        pytest.skip("no local PostgreSQL cluster in /etc/postgresql to restart")
    return versions[-1].parent.name, "main"


def pg_ctl(action: str) -> None:
    version, name = cluster()
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", version, name, action],
        check=True,
        capture_output=True,
        timeout=120 * PATIENCE,
    )


@pytest.mark.slow
@pytest.mark.exclusive  # restarts the shared PostgreSQL: make test runs it alone
@pytest.mark.timeout(3600)  # a hang guard only: the waits fail when nothing moves
def test_postgres_restart_mid_batch_retries_and_loses_nothing(
    env: dict[str, str], store_url: str, pool: harness.Workers
) -> None:
    cluster()
    pool.start("a")
    pool.start("b")
    batch = ids(N)
    started = time.monotonic()
    submit_batch(env, batch)
    harness.wait_for_finished(store_url, 40, still_s=300, what="40 done")
    at_restart = harness.finished(store_url)
    try:
        pg_ctl("restart")  # fast shutdown: every open connection is terminated
        harness.wait_for(
            lambda: reachable(PG_HOST, PG_PORT), timeout=60 * PATIENCE, what="PostgreSQL back"
        )
    finally:
        if not reachable(PG_HOST, PG_PORT):
            pg_ctl("start")
    restarted = time.monotonic()
    harness.wait_for_finished(store_url, N, still_s=600, what=f"all {N} final")
    time.sleep(3)
    c = harness.counts(store_url)
    logs = "".join(w.log_text() for w in pool.started)
    db_retries = logs.count("OperationalError")
    print(
        f"\ndrill postgres restart: {N} submissions in {time.monotonic() - started:.0f} s, "
        f"{N - at_restart} finished after the restart "
        f"({time.monotonic() - restarted:.0f} s); {db_retries} log lines name OperationalError; "
        f"deliveries {c.deliveries}; merges {c.merges}; statuses {c.statuses}"
    )
    harness.assert_exactly_once(c, N)
    assert c.statuses == {"done": N}, c  # a database outage never degrades a submission
    assert db_retries > 0  # the restart really hit running tasks
