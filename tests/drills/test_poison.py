"""Drill 5: a submission that kills its tier-1 worker process on every delivery.

With prefork, the parent sees WorkerLostError and, with acks_late + reject_on_worker_lost,
requeues the message; each delivery is counted in the tier row, and the delivery after
``EVALQ_MAX_DELIVERIES`` records the tier failed (PoisonMessage) instead of running it. The chord
completes, the merge runs and marks the submission failed with the reason, and the rest of the
batch is unaffected.
"""

from __future__ import annotations

import time

import pytest

from evalq.store import queries
from evalq.store.db import session_scope
from tests.drills import harness
from tests.drills.batch import TASK, ids, submit_batch

N_GOOD = 20
MAX_DELIVERIES = int(harness.DRILL_SETTINGS["max_deliveries"])


@pytest.mark.slow
@pytest.mark.timeout(3600)  # a hang guard only: the waits fail when nothing moves
def test_a_poisonous_submission_is_failed_after_bounded_deliveries(
    env: dict[str, str], store_url: str, pool: harness.Workers
) -> None:
    worker = pool.start("a", concurrency=2, include=("tests.drills.poison",))
    good = ids(N_GOOD)
    poison = "poison-0000"
    started = time.monotonic()
    submit_batch(env, [poison, *good])
    harness.wait_for_finished(store_url, N_GOOD + 1, still_s=480, what="batch final")
    elapsed = time.monotonic() - started
    c = harness.counts(store_url)
    with session_scope(store_url) as session:
        row = queries.get_submission_row(session, submission_id=poison)
        text = queries.tier_results(session, submission_id=poison)["text"]
        evaluation = queries.get_evaluation(session, submission_id=poison)
        assert evaluation is not None
        status, reason, missing = row.status, row.error, evaluation.missing_tiers
        text_status, deliveries, error = text.status, text.deliveries, text.error
    kills = worker.log_text().count("exited with 'signal 9 (SIGKILL)'")
    print(
        f"\ndrill poison: {N_GOOD + 1} submissions in {elapsed:.0f} s; poison text tier "
        f"delivered {deliveries} times ({kills} children killed); status {status}; {error}"
    )
    # Bounded: killed on each of the first MAX_DELIVERIES deliveries, recorded failed on the next.
    assert kills == MAX_DELIVERIES
    assert (text_status, deliveries) == ("failed", MAX_DELIVERIES + 1)
    assert error is not None and error["type"] == "PoisonMessage"
    assert f"delivered {MAX_DELIVERIES + 1} times" in error["message"]
    # The chord completed: the merge ran and marked the submission failed, with the reason.
    assert status == "failed"
    assert reason is not None and (reason["type"], reason["tier"]) == ("PoisonMessage", "text")
    assert reason["message"] == error["message"]
    assert missing["text"]["status"] == "failed"
    assert missing["text"]["error"]["type"] == "PoisonMessage"
    # Left out of what the task is ranked by: the leaderboard rows are the 20 good ones.
    with session_scope(store_url) as session:
        ranked = {row.id for row, _ in queries.task_evaluations(session, task_id=TASK.id)}
    assert poison not in ranked and len(ranked) == N_GOOD
    # The rest of the batch is untouched.
    harness.assert_exactly_once(c, N_GOOD + 1)
    assert c.statuses == {"done": N_GOOD, "failed": 1}, c
