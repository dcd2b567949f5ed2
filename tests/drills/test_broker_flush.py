"""Drill 2: the broker's data flushed mid-batch; the recovery sweep re-enqueues from the store."""

from __future__ import annotations

import re
import time
from contextlib import suppress

import pytest

from tests.drills import harness
from tests.drills.batch import ids, submit_batch

N = 200
STUCK_S = int(harness.DRILL_SETTINGS["stuck_after_s"])


@pytest.mark.slow
@pytest.mark.timeout(3600)  # a hang guard only: the waits fail when nothing moves
def test_broker_flush_mid_batch_then_recover_evaluates_each_once(
    env: dict[str, str], store_url: str, broker_url: str, pool: harness.Workers
) -> None:
    pool.start("a")
    pool.start("b")
    started = time.monotonic()
    submit_batch(env, ids(N))
    harness.wait_for_finished(store_url, 40, still_s=300, what="40 done")
    harness.flush_broker(broker_url)  # queues, unacked messages, chord counters: all gone
    at_flush = harness.finished(store_url)
    flushed = time.monotonic()

    # Without the sweep the batch stalls: what was in the broker is lost.
    stalled = harness.finished(store_url)
    time.sleep(STUCK_S + 2)
    while harness.finished(store_url) != stalled:
        stalled = harness.finished(store_url)
        time.sleep(3)
    assert stalled < N

    # The sweep, as operators (or beat) run it, until everything is final: a sweep, then the
    # batch's progress awaited; a new sweep only once the runs re-enqueued stop moving.
    sweeps: list[int] = []
    while harness.finished(store_url) < N:
        out = harness.run_cli(env, "recover", "--older-than", str(STUCK_S))
        match = re.search(r"re-enqueued (\d+)", out)
        assert match, out
        sweeps.append(int(match.group(1)))
        assert len(sweeps) <= 10, (
            f"10 sweeps and still not all final: {harness.movement(store_url)}"
        )
        with suppress(TimeoutError):  # stalled again: the next sweep says what it re-enqueues
            harness.wait_for_finished(
                store_url, N, still_s=STUCK_S + 60, what=f"all {N} final after recover"
            )
    time.sleep(3)
    c = harness.counts(store_url)
    print(
        f"\ndrill broker flush: flushed at {at_flush}/{N} final; stalled at {stalled}; sweeps "
        f"re-enqueued {sweeps}; all final {time.monotonic() - flushed:.0f} s after the flush "
        f"({time.monotonic() - started:.0f} s in all); merges {c.merges}; "
        f"deliveries {c.deliveries}; statuses {c.statuses}"
    )
    assert sweeps[0] == N - stalled  # exactly the unfinished ones, each once
    harness.assert_exactly_once(c, N)
    assert c.statuses == {"done": N}, c
