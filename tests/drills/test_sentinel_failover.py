"""Drill: the Redis master killed with ``-9`` mid-batch; the sentinels promote its replica.

Broker, result backend, heartbeats and the recovery sweep all reach Redis through a
``sentinel://`` URL (three sentinels, quorum 2) and ``EVALQ_REDIS_MASTER_NAME``. After the kill,
every worker loses its connection, the sentinels agree the master is down (after about
``DOWN_AFTER_MS``) and promote the replica, and the workers reconnect to it through the
sentinels. What the dead master had not yet replicated (asynchronous replication) is lost from
the broker; the store is the source of truth, and the beat's recovery sweep re-enqueues what no
worker holds. The drill waits on progress, not on a clock, and prints the time to recover.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.drills import harness
from tests.drills.batch import submit_batch
from tests.drills.sentinel import MASTER_NAME, SentinelGroup, sentinel_group
from tests.support.processes import PATIENCE

N = 80
FINAL_BEFORE_KILL = 15
STILL_S = 300 * PATIENCE  # fail only when nothing has moved for this long


@pytest.fixture
def group(tmp_path: Path) -> Iterator[SentinelGroup]:
    """The drill's own master, replica and three sentinels."""
    with sentinel_group(tmp_path / "sentinel") as started:
        yield started


@pytest.fixture
def broker_url(group: SentinelGroup) -> str:
    """Broker and result backend: the sentinels' URL (the shared Redis is not used)."""
    return group.url


@pytest.fixture
def env(store_url: str, broker_url: str) -> dict[str, str]:
    """The drill settings, the master's name, and a sweep every few seconds."""
    return harness.drill_env(
        store_url,
        broker_url,
        redis_master_name=MASTER_NAME,
        recover_every_s="5",
        lost_after_s="15",
    )


@pytest.mark.slow
@pytest.mark.timeout(3600)  # a hang guard only: the waits fail when nothing moves
def test_master_killed_mid_batch_every_submission_final_once(
    group: SentinelGroup, env: dict[str, str], store_url: str, pool: harness.Workers
) -> None:
    pool.start("a")
    pool.start("b")
    old_master = group.current_master()
    assert old_master == ("127.0.0.1", group.master_port), old_master
    with harness.beat(env, pool.logs):
        started = time.monotonic()
        submit_batch(env, [f"s-{i:04d}" for i in range(N)])
        harness.wait_for_finished(
            store_url, FINAL_BEFORE_KILL, still_s=STILL_S, what=f"{FINAL_BEFORE_KILL} final"
        )
        at_kill = harness.finished(store_url)
        group.kill_master()
        killed = time.monotonic()
        promoted_s = harness.wait_for(
            lambda: group.current_master() not in (None, old_master),
            timeout=120 * PATIENCE,
            what="the sentinels promote the replica",
            poll=0.1,
        )
        first_after_s = harness.wait_for_progress(
            lambda: harness.movement(store_url),
            lambda: harness.finished(store_url) > at_kill,
            still_s=STILL_S,
            what="a submission finishes after the failover",
        )
        harness.wait_for_finished(
            store_url, N, still_s=STILL_S, what=f"all {N} final after the failover"
        )
        recovered_s = time.monotonic() - killed
    time.sleep(3)  # let late duplicates land before counting
    c = harness.counts(store_url)
    logs = "".join(w.log_text() for w in pool.started)
    print(
        f"\ndrill sentinel failover: master killed at {at_kill}/{N} final "
        f"({killed - started:.0f} s in); replica promoted {promoted_s:.1f} s after the kill "
        f"(new master {group.current_master()}); first submission final after it "
        f"{first_after_s:.1f} s later; all {N} final {recovered_s:.0f} s after the kill; "
        f"{logs.count('cannot be acknowledged after a connection loss')} tasks cancelled on "
        f"connection loss; tier deliveries {c.deliveries}; merges {c.merges}; "
        f"statuses {c.statuses}"
    )
    harness.assert_exactly_once(c, N)
    assert c.final == N, c
    assert group.current_master() == ("127.0.0.1", group.replica_port)
