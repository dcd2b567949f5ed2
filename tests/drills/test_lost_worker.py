"""Drill 6: a whole worker lost mid-task, under the shipped timeouts, while another has a backlog.

The visibility timeout (3600 s) and the stuck age (1800 s) are the shipped ones, so neither kombu's
restore nor the age rule can finish the dead worker's work within the drill: only the sweep's
heartbeat rule can. Only the beat interval is short, as an operator may set it.
"""

from __future__ import annotations

import re
import time
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from evalq.core.settings import Settings
from evalq.store.db import session_scope
from evalq.store.models import SubmissionRow, TierResultRow, utcnow
from evalq.workers.names import MERGE_QUEUE
from tests.drills import harness, hold
from tests.drills.batch import ids, submit_batch
from tests.support.processes import PATIENCE

DEFAULTS = Settings.model_fields
VISIBILITY_S = DEFAULTS["visibility_timeout_s"].default
STUCK_S = DEFAULTS["stuck_after_s"].default
LOST_AFTER_S = DEFAULTS["lost_after_s"].default
RECOVER_EVERY_S = 10
HELD_BY_B = ["hold-b-0", "hold-b-1"]  # tests.drills.hold: tier 1 held on attempt 1
HELD_BY_A = ["hold-a-0", "hold-a-1"]
BACKLOG = ids(40, "w")
SWEEP_DONE = re.compile(r"Task evalq\.recover\[[^\]]+\] succeeded")


@pytest.fixture
def env(store_url: str, broker_url: str, tmp_path: Path) -> dict[str, str]:
    """The shipped settings (no drill overrides) with a short beat interval; held tier 1s
    end when the drill creates the release file (`tests.drills.hold`)."""
    drill = harness.drill_env(store_url, broker_url, recover_every_s=str(RECOVER_EVERY_S))
    shortened = {f"EVALQ_{name.upper()}" for name in harness.DRILL_SETTINGS}
    kept = {k: v for k, v in drill.items() if k not in shortened}
    return kept | {hold.RELEASE: str(tmp_path / "release-holds")}


def text_rows(url: str, sids: list[str]) -> list[TierResultRow]:
    with session_scope(url) as session:
        rows = session.scalars(
            select(TierResultRow).where(
                TierResultRow.submission_id.in_(sids), TierResultRow.tier == "text"
            )
        )
        return list(rows)


def running_on(url: str, sids: list[str], worker: harness.Worker) -> bool:
    """Tier 1 of every one of ``sids`` is running, claimed by ``worker``."""
    rows = text_rows(url, sids)
    return len(rows) == len(sids) and all(
        row.status == "running" and (row.owner or "").startswith(f"{worker.hostname}/")
        for row in rows
    )


def held_for(url: str, sids: list[str]) -> timedelta:
    """How long the youngest of the running tier 1s of ``sids`` has been running."""
    return utcnow() - max(row.updated_at for row in text_rows(url, sids))


def enqueue_counts(url: str) -> dict[str, int]:
    with session_scope(url) as session:
        return dict(session.execute(select(SubmissionRow.id, SubmissionRow.enqueue_count)).all())


def final(url: str, sids: list[str]) -> bool:
    with session_scope(url) as session:
        statuses = session.scalars(select(SubmissionRow.status).where(SubmissionRow.id.in_(sids)))
        return all(status in ("done", "degraded", "failed") for status in statuses)


def sweeps(worker: harness.Worker) -> int:
    """Recovery sweeps the merge worker has run so far."""
    return len(SWEEP_DONE.findall(worker.log_text()))


@pytest.mark.slow
@pytest.mark.timeout(3600)  # a hang guard only: the waits fail when nothing moves
def test_a_lost_worker_is_recovered_in_minutes_and_waiting_work_is_never_re_enqueued(
    env: dict[str, str], store_url: str, broker_url: str, pool: harness.Workers
) -> None:
    assert (VISIBILITY_S, STUCK_S) == (3600, 1800)  # the shipped ones, not the drills'
    held = ("tests.drills.hold",)
    b = pool.start("b", include=held)
    submit_batch(env, HELD_BY_B)
    harness.wait_for(
        lambda: running_on(store_url, HELD_BY_B, b), timeout=120 * PATIENCE, what="b holds"
    )
    a = pool.start("a", include=held)
    merge = pool.start("m", queues=MERGE_QUEUE, concurrency=1)
    everyone = HELD_BY_B + HELD_BY_A + BACKLOG
    with harness.beat(env, pool.logs):
        submit_batch(env, HELD_BY_A + BACKLOG)
        harness.wait_for(
            lambda: running_on(store_url, HELD_BY_A, a), timeout=120 * PATIENCE, what="a holds"
        )

        b.kill_group()  # a lost machine: main process and both children, mid tier 1
        killed = time.monotonic()
        assert running_on(store_url, HELD_BY_B, b), "b was killed after its tier 1s ended"
        recovered_s = harness.wait_for(
            lambda: all(enqueue_counts(store_url)[sid] == 2 for sid in HELD_BY_B),
            timeout=(LOST_AFTER_S + 120) * PATIENCE,
            what="the dead worker's submissions re-enqueued",
        )

        # a's tier 1s run on a live worker past EVALQ_LOST_AFTER_S, its backlog waits behind
        # them, and sweep after sweep leaves both alone.
        harness.wait_for(
            lambda: held_for(store_url, HELD_BY_A) > timedelta(seconds=LOST_AFTER_S),
            timeout=120 * PATIENCE,
            what="a's tier 1s older than the lost-after age",
        )
        swept = sweeps(merge)
        harness.wait_for(
            lambda: sweeps(merge) >= swept + 2,
            timeout=4 * RECOVER_EVERY_S * PATIENCE,
            what="two sweeps",
        )
        assert running_on(store_url, HELD_BY_A, a)
        waiting = [sid for sid in BACKLOG if not final(store_url, [sid])]
        assert waiting, "a's backlog was not waiting during the sweeps"
        Path(env[hold.RELEASE]).touch()  # a's tier 1s end now

        harness.wait_for(
            lambda: final(store_url, HELD_BY_B),
            timeout=420 * PATIENCE,
            what="the dead worker's work final",
        )
        lost_final_s = time.monotonic() - killed
        harness.wait_for(
            lambda: final(store_url, everyone), timeout=420 * PATIENCE, what="everything final"
        )
        all_final_s = time.monotonic() - killed
    time.sleep(3)  # let late duplicates land before counting
    c = harness.counts(store_url)
    attempts = enqueue_counts(store_url)
    with session_scope(store_url) as session:
        deliveries = {
            (row.submission_id, row.tier): row.deliveries
            for row in session.scalars(select(TierResultRow))
        }
    print(
        f"\ndrill lost worker: visibility timeout {VISIBILITY_S} s, stuck after {STUCK_S} s, "
        f"lost after {LOST_AFTER_S} s, sweep every {RECOVER_EVERY_S} s; worker b killed "
        f"mid tier 1 with {len(waiting)} of a's {len(BACKLOG)} backlog submissions waiting; "
        f"b's submissions re-enqueued {recovered_s:.0f} s after the kill, final after "
        f"{lost_final_s:.0f} s (behind a's own held tier 1s); all "
        f"{len(everyone)} final {all_final_s:.0f} s after the kill; "
        f"{sweeps(merge)} sweeps; enqueue counts {sorted(set(attempts.values()))}; "
        f"tier deliveries {c.deliveries}; statuses {c.statuses}"
    )
    harness.assert_exactly_once(c, len(everyone))
    assert {sid: attempts[sid] for sid in HELD_BY_B} == dict.fromkeys(HELD_BY_B, 2)
    assert {sid: n for sid, n in attempts.items() if sid not in HELD_BY_B} == dict.fromkeys(
        HELD_BY_A + BACKLOG, 1
    )
    others = {key: n for key, n in deliveries.items() if key[0] not in HELD_BY_B}
    assert set(others.values()) == {1}, others  # no waiting tier was delivered twice
    for sid in HELD_BY_B:  # the interrupted tier 1 ran again and finished
        assert deliveries[(sid, "text")] == 2
    assert c.statuses == {"done": len(everyone)}, c
