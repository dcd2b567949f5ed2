"""Drill 7: the broker (Redis with AOF) stopped and started again mid-batch, on shipped defaults.

The broker is a private ``redis-server`` (own port, own directory, ``--appendonly yes``) the drill
stops with SIGTERM, as an init system does, and starts again ``DOWN_S`` later. Its data survives
(the append-only file), but every worker loses its connection: Celery cancels the tasks it was
running ("cannot be acknowledged after a connection loss") and forgets the ones it had reserved,
whose messages then sit in kombu's ``unacked`` hash for the visibility timeout (an hour). The
second variant also kills a whole worker with ``-9`` while the broker is down.

Every setting is the shipped one (the beat sweep every 60 s included): only the recovery sweep's
rules can finish the batch within minutes.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from evalq.store.db import session_scope
from evalq.store.models import SubmissionRow, TierResultRow
from tests.drills import harness
from tests.drills.batch import submit_batch
from tests.drills.slow import SLOW_PREFIX
from tests.support.processes import PATIENCE

N = 200
DOWN_S = 8
SLOW_EVERY = 10  # one submission in 10 has a 3 s tier 1 (tests.drills.slow): running at the stop
FINAL_WITHIN_S = 600  # a bound for the wait, far above the goal (about 3 minutes)


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[harness.PrivateRedis]:
    """The drill's own Redis, the one it restarts (the shared one is never stopped)."""
    with harness.private_redis(tmp_path / "redis") as server:
        yield server


@pytest.fixture
def broker_url(broker: harness.PrivateRedis) -> str:
    """Broker and result backend: the private Redis (fresh, so nothing to flush)."""
    return broker.url


@pytest.fixture
def env(store_url: str, broker_url: str) -> dict[str, str]:
    """The shipped settings: none of the drills' shortened timeouts."""
    drill = harness.drill_env(store_url, broker_url)
    shortened = {f"EVALQ_{name.upper()}" for name in harness.DRILL_SETTINGS}
    return {k: v for k, v in drill.items() if k not in shortened}


def batch_ids(n: int) -> list[str]:
    """``n`` ids, zero-padded so they sort; one in ``SLOW_EVERY`` carries the slow prefix."""
    return [f"{SLOW_PREFIX if i % SLOW_EVERY == 1 else 's-'}{i:04d}" for i in range(n)]


def slow_tier_running(worker: harness.Worker, store_url: str, broker_url: str) -> str | None:
    """A submission whose slow tier 1 ``worker`` runs right now (its row ``running``), or None."""
    for task in worker.active_tier_tasks(broker_url):
        if task.tier == "text" and task.submission_id.startswith(SLOW_PREFIX):
            row = harness.tier_row(store_url, task.submission_id, task.tier)
            if row is not None and row[0] == "running":
                return task.submission_id
    return None


def running_slow_tiers(url: str) -> list[str]:
    """Submissions whose slow tier 1 the store shows ``running`` now (read just after the stop).

    A slow tier the workers reported as active a moment earlier may have finished in between (a
    ``celery inspect`` round trip under load takes most of ``SLOW_S``); only a row still running
    once the broker is down belongs to a task the stop really interrupted.
    """
    with session_scope(url) as session:
        return list(
            session.scalars(
                select(TierResultRow.submission_id).where(
                    TierResultRow.tier == "text",
                    TierResultRow.status == "running",
                    TierResultRow.submission_id.startswith(SLOW_PREFIX),
                )
            )
        )


def enqueue_counts(url: str) -> dict[int, int]:
    """Enqueue count -> how many submissions."""
    with session_scope(url) as session:
        return harness._histogram(list(session.scalars(select(SubmissionRow.enqueue_count))))


def restart_mid_batch(
    broker: harness.PrivateRedis,
    env: dict[str, str],
    store_url: str,
    pool: harness.Workers,
    *,
    kill_worker: bool,
) -> None:
    slow = ("tests.drills.slow",)
    a = pool.start("a", include=slow)
    b = pool.start("b", include=slow)
    with harness.beat(env, pool.logs):
        started = time.monotonic()
        submit_batch(env, batch_ids(N))
        harness.wait_for_finished(store_url, 40, still_s=300, what="40 done")
        harness.wait_for(
            lambda: slow_tier_running(a, store_url, broker.url) is not None,
            timeout=120 * PATIENCE,
            what="a slow tier 1 on worker a",
            poll=0.2,
        )
        broker.stop()
        stopped = time.monotonic()
        interrupted = running_slow_tiers(store_url)
        at_stop = harness.finished(store_url)
        if kill_worker:
            b.kill_group()  # a lost machine, while the broker is down
        time.sleep(DOWN_S)
        # a listed tier can still end while the broker is down: under load its worker notices the
        # lost connection only after the tier's few seconds, and its store row says ok; the
        # redelivery after the restart then finds it final (one delivery, still exactly once)
        ended_down = {
            sid
            for sid in interrupted
            if (harness.tier_row(store_url, sid, "text") or ("",))[0] == "ok"
        }
        broker.start()
        back = time.monotonic()
        harness.wait_for_finished(
            store_url, N, still_s=FINAL_WITHIN_S, what=f"all {N} final after the broker restart"
        )
        final_s = time.monotonic() - back
    time.sleep(3)  # let late duplicates land before counting
    c = harness.counts(store_url)
    victims = [harness.tier_row(store_url, sid, "text") for sid in interrupted]
    cut = [harness.tier_row(store_url, sid, "text") for sid in interrupted if sid not in ended_down]
    logs = "".join(w.log_text() for w in pool.started)
    cancelled = logs.count("cannot be acknowledged after a connection loss")
    print(
        f"\ndrill broker restart{' + kill -9' if kill_worker else ''}: stopped at {at_stop}/{N} "
        f"final ({stopped - started:.0f} s in), down {back - stopped:.0f} s; all {N} final "
        f"{final_s:.0f} s after the broker was back ({time.monotonic() - started:.0f} s in all); "
        f"{cancelled} tasks cancelled on connection loss; interrupted tier 1s (status, "
        f"deliveries) {victims}, {len(ended_down)} of them ended while the broker was down; "
        f"enqueue counts {enqueue_counts(store_url)}; tier deliveries "
        f"{c.deliveries}; merges {c.merges}; statuses {c.statuses}"
    )
    harness.assert_exactly_once(c, N)
    assert c.statuses == {"done": N}, c  # nothing degraded: every interrupted tier ran again
    assert victims, "no slow tier 1 was still running when the broker stopped"
    assert all(v is not None and v[0] == "ok" for v in victims), victims
    # each tier the stop cut short (not ended by the restart) was delivered again and finished
    assert all(v is not None and v[1] >= 2 for v in cut), (cut, ended_down)


@pytest.mark.slow
@pytest.mark.timeout(3600)  # a hang guard only: the waits fail when nothing moves
def test_broker_restart_mid_batch_finishes_every_submission_once(
    broker: harness.PrivateRedis, env: dict[str, str], store_url: str, pool: harness.Workers
) -> None:
    restart_mid_batch(broker, env, store_url, pool, kill_worker=False)


@pytest.mark.slow
@pytest.mark.timeout(3600)  # a hang guard only: the waits fail when nothing moves
def test_broker_restart_and_a_killed_worker_finish_every_submission_once(
    broker: harness.PrivateRedis, env: dict[str, str], store_url: str, pool: harness.Workers
) -> None:
    restart_mid_batch(broker, env, store_url, pool, kill_worker=True)
