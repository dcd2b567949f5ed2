"""Drill 1: kill -9 of a prefork child, then of a whole worker, in the middle of 500 submissions."""

from __future__ import annotations

import os
import signal
import time

import pytest

from tests.drills import harness
from tests.drills.batch import submit_batch
from tests.drills.slow import SLOW_PREFIX
from tests.support.processes import PATIENCE

N = 500
SLOW_EVERY = 20  # one submission in 20 has a slow tier 1 (tests.drills.slow): a sure kill target
VISIBILITY_S = int(harness.DRILL_SETTINGS["visibility_timeout_s"])


def batch_ids(n: int) -> list[str]:
    """``n`` ids, zero-padded so they sort; one in ``SLOW_EVERY`` carries the slow prefix."""
    return [f"{SLOW_PREFIX if i % SLOW_EVERY == 1 else 's-'}{i:04d}" for i in range(n)]


def kill_mid_tier(
    worker: harness.Worker,
    store_url: str,
    broker_url: str,
    *,
    whole_worker: bool,
    timeout: float = 120 * PATIENCE,
) -> harness.ActiveTier:
    """SIGKILL a child of ``worker`` (or the whole worker) while it runs a slow tier 1.

    Returns the task it interrupted. Whether the kill landed mid-task is read from the store, not
    assumed: the task had counted its delivery (a ``running`` row) and not yet finished. A child
    kill that came too late is tried again with another task; a whole worker can be killed once.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for task in worker.active_tier_tasks(broker_url):
            if task.tier != "text" or not task.submission_id.startswith(SLOW_PREFIX):
                continue
            if whole_worker:
                # the listing is a broadcast round trip (seconds under load): a tier it names may
                # have ended since, so the store is asked right before the one kill there is
                before = harness.tier_row(store_url, task.submission_id, task.tier)
                if before is None or before[0] != "running":
                    continue
                worker.kill_group()
            else:
                os.kill(task.pid, signal.SIGKILL)
            row = harness.tier_row(store_url, task.submission_id, task.tier)
            if row is not None and row[0] == "running":
                return task
            assert not whole_worker, f"worker {worker.name} was killed after {task} ended: {row}"
            break
        time.sleep(0.2)
    raise TimeoutError(f"no slow tier 1 to interrupt on worker {worker.name} within {timeout} s")


@pytest.mark.slow
@pytest.mark.timeout(3600)  # a hang guard only: the waits fail when nothing moves
def test_kill_9_mid_batch_loses_and_duplicates_nothing(
    env: dict[str, str], store_url: str, broker_url: str, pool: harness.Workers
) -> None:
    # The recovery sweep runs as deployed (beat): a whole worker killed with SIGKILL may die
    # between popping a message from the queue and recording it as unacked (kombu's Redis
    # transport), and then neither the visibility timeout nor a redelivery brings it back: the
    # sweep finds that message nowhere and sends the missing work again (docs/reliability.md).
    with harness.beat(env, pool.logs):
        slow = ("tests.drills.slow",)
        a = pool.start("a", include=slow)
        b = pool.start("b", include=slow)
        started = time.monotonic()
        submit_batch(env, batch_ids(N))

        # A prefork child of worker a, mid-task: acks_late + reject_on_worker_lost requeue its task.
        harness.wait_for_finished(store_url, 50, still_s=300, what="50 done")
        lost_child = kill_mid_tier(a, store_url, broker_url, whole_worker=False)
        harness.wait_for(
            lambda: lost_child.pid not in a.children() and len(a.children()) == 2,
            timeout=120 * PATIENCE,
            what="worker a replaced its child",
        )

        # The whole of worker b (main process and children): its unacked messages are restored by
        # worker a once the visibility timeout has passed.
        harness.wait_for_finished(store_url, 150, still_s=300, what="150 done")
        at_kill = harness.finished(store_url)
        lost_worker = kill_mid_tier(b, store_url, broker_url, whole_worker=True)
        killed = time.monotonic()

        harness.wait_for_finished(
            store_url, N, still_s=VISIBILITY_S + 420, what=f"all {N} final after the kills"
        )
    total = time.monotonic() - started
    after_kill = time.monotonic() - killed
    time.sleep(3)  # let late duplicates (restored messages) land before counting
    c = harness.counts(store_url)
    rows = {
        task: harness.tier_row(store_url, task.submission_id, task.tier)
        for task in (lost_child, lost_worker)
    }
    print(
        f"\ndrill kill -9: {N} submissions in {total:.0f} s; {N - at_kill} finished in the "
        f"{after_kill:.0f} s after worker b was killed (visibility timeout {VISIBILITY_S} s); "
        f"tier deliveries {c.deliveries}; merges {c.merges}; statuses {c.statuses}; "
        f"interrupted tasks (status, deliveries): {list(rows.values())}"
    )
    harness.assert_exactly_once(c, N)
    assert c.statuses == {"done": N}, c  # nothing degraded: every killed task ran again
    assert "WorkerLostError" in a.log_text()
    # Each interrupted tier task was delivered again and finished: the child's at once (rejected
    # and requeued by worker a), worker b's after the visibility timeout (restored by worker a).
    for task, row in rows.items():
        assert row is not None and row[0] == "ok" and row[1] >= 2, (task, row)
