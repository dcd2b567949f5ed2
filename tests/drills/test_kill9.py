"""Drill 1: kill -9 of a prefork child, then of a whole worker, in the middle of 500 submissions."""

from __future__ import annotations

import os
import signal
import time

import pytest

from tests.drills import harness
from tests.drills.batch import ids, submit_batch

N = 500
VISIBILITY_S = int(harness.DRILL_SETTINGS["visibility_timeout_s"])


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_kill_9_mid_batch_loses_and_duplicates_nothing(
    env: dict[str, str], store_url: str, pool: harness.Workers
) -> None:
    a = pool.start("a")
    b = pool.start("b")
    batch = ids(N)
    started = time.monotonic()
    submit_batch(env, batch)

    # A prefork child of worker a, mid-task: acks_late + reject_on_worker_lost requeue its task.
    harness.wait_for(lambda: harness.finished(store_url) >= 50, timeout=300, what="50 done")
    victim = a.busy_child()
    os.kill(victim, signal.SIGKILL)
    harness.wait_for(
        lambda: victim not in a.children() and len(a.children()) == 2,
        timeout=120,
        what="worker a replaced its child",
    )

    # The whole of worker b (main process and children): its unacked messages are restored by
    # worker a once the visibility timeout has passed.
    harness.wait_for(lambda: harness.finished(store_url) >= 150, timeout=300, what="150 done")
    b.busy_child()
    at_kill = harness.finished(store_url)
    b.kill_group()
    killed = time.monotonic()

    harness.wait_for(
        lambda: harness.finished(store_url) == N,
        timeout=VISIBILITY_S + 420,
        what=f"all {N} final after the kills",
        poll=1,
    )
    total = time.monotonic() - started
    after_kill = time.monotonic() - killed
    time.sleep(3)  # let late duplicates (restored messages) land before counting
    c = harness.counts(store_url)
    print(
        f"\ndrill kill -9: {N} submissions in {total:.0f} s; {N - at_kill} finished in the "
        f"{after_kill:.0f} s after worker b was killed (visibility timeout {VISIBILITY_S} s); "
        f"tier deliveries {c.deliveries}; merges {c.merges}; statuses {c.statuses}"
    )
    harness.assert_exactly_once(c, N)
    assert c.statuses == {"done": N}, c  # nothing degraded: every killed task ran again
    assert "WorkerLostError" in a.log_text() or "signal 9" in a.log_text()
    # Some tier task was started and then lost with its process, and ran again.
    assert max(c.deliveries) >= 2, c
