"""The recovery sweep tells lost work from waiting work, on real Redis and a real store."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta

import pytest
import redis
from tests.support.pipeline import Pipeline, submission
from tests.support.processes import PATIENCE

from evalq.core.schemas import Submission, Tier
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.store.models import TierResultRow, utcnow
from evalq.tasks.recover import recover
from evalq.workers import heartbeat, queued, unacked
from evalq.workers.embedded import embedded_worker
from evalq.workers.names import GRAPH_QUEUE, QUEUES, TEXT_QUEUE, TIER_TASKS

pytestmark = pytest.mark.both_databases  # the database matters here (tests/conftest.py)

LONG = timedelta(seconds=1800)  # the shipped EVALQ_STUCK_AFTER_S: nothing here is that old


def claim(url: str, sid: str, owner: str, *, seconds_ago: float, tier: Tier = "text") -> None:
    """``tier`` (tier 1) of ``sid`` started by worker ``owner`` ``seconds_ago``, still running."""
    with session_scope(url) as session:
        queries.start_tier(session, submission_id=sid, tier=tier, owner=owner)
        row = session.get(TierResultRow, (sid, tier))
        assert row is not None
        row.updated_at = utcnow() - timedelta(seconds=seconds_ago)


def enqueue_counts(url: str, ids: list[str]) -> dict[str, int]:
    with session_scope(url) as session:
        return {
            sid: queries.get_submission_row(session, submission_id=sid).enqueue_count for sid in ids
        }


def age_unacked(client: redis.Redis, *, seconds: float) -> int:
    """Make every unacknowledged message look taken ``seconds`` ago; how many there are."""
    tags = client.zrange(unacked.UNACKED_INDEX_KEY, 0, -1)
    for tag in tags:
        client.zadd(unacked.UNACKED_INDEX_KEY, {tag: time.time() - seconds})
    return len(tags)


def test_a_tier_on_a_dead_worker_is_re_enqueued_and_waiting_work_is_left_alone(
    pipeline: Callable[..., Pipeline],
) -> None:
    p = pipeline()
    ids = ["lost", "just-claimed", "busy", "waiting"]
    p.client.submit_many([submission(sid) for sid in ids])  # enqueued once each, no worker
    claim(p.db_url, "lost", "dead@host/1", seconds_ago=120)
    claim(p.db_url, "just-claimed", "dead@host/1", seconds_ago=5)  # within EVALQ_LOST_AFTER_S
    claim(p.db_url, "busy", "live@host/2", seconds_ago=120)
    with redis.Redis.from_url(p.redis_url) as client:
        heartbeat.beat(client, "live@host/2", "live@host", ttl_s=30)
        assert recover(p.app, older_than=LONG) == ["lost"]
    assert enqueue_counts(p.db_url, ids) == {"lost": 2, "just-claimed": 1, "busy": 1, "waiting": 1}


def test_a_message_taken_by_a_dead_worker_is_re_enqueued_once(
    pipeline: Callable[..., Pipeline],
) -> None:
    p = pipeline()
    p.client.submit_many([submission("taken"), submission("waiting")])
    with p.app.connection_for_write() as connection, redis.Redis.from_url(p.redis_url) as client:
        # A consumer takes tier 1 of "taken" without acknowledging it, then is never heard of
        # again (no heartbeat, no reply): the message sits in kombu's unacked hash.
        message = connection.default_channel.basic_get(queue=TEXT_QUEUE, no_ack=False)
        assert message is not None and message.headers["id"] == "taken:text:1"
        assert age_unacked(client, seconds=120) == 1
        assert recover(p.app, older_than=LONG) == ["taken"]
        # The old message stays unacked until the visibility timeout; it belongs to attempt 1
        # now, so the next sweep does not re-enqueue "taken" again.
        assert recover(p.app, older_than=LONG) == []
    assert enqueue_counts(p.db_url, ["taken", "waiting"]) == {"taken": 2, "waiting": 1}


def test_no_message_is_orphaned_while_a_worker_with_a_heartbeat_does_not_answer(
    pipeline: Callable[..., Pipeline],
) -> None:
    p = pipeline()
    p.client.submit(submission("taken"))
    with p.app.connection_for_write() as connection, redis.Redis.from_url(p.redis_url) as client:
        assert connection.default_channel.basic_get(queue=TEXT_QUEUE, no_ack=False) is not None
        age_unacked(client, seconds=120)
        # A live worker (its heartbeat is fresh) too busy to answer may hold the message.
        heartbeat.beat(client, "slow@host/3", "slow@host", ttl_s=30)
        assert recover(p.app, older_than=LONG) == []
    assert enqueue_counts(p.db_url, ["taken"]) == {"taken": 1}


def test_a_message_a_live_worker_holds_for_its_countdown_is_not_orphaned(
    pipeline: Callable[..., Pipeline],
) -> None:
    p = pipeline()
    with session_scope(p.db_url) as session:
        held = Submission.model_validate(submission("held"))
        queries.add_submission(session, submission=held, cost_usd=None)
        attempt = queries.begin_enqueue(session, submission_id="held")
    # A tier retry waiting out its countdown in a live worker: taken, unacknowledged, held.
    p.app.send_task(
        TIER_TASKS["text"],
        args=["held"],
        task_id=f"held:text:{attempt}",
        queue=TEXT_QUEUE,
        countdown=600,
    )
    with embedded_worker(p.app), redis.Redis.from_url(p.redis_url) as client:
        deadline = time.monotonic() + 30 * PATIENCE
        while not client.zcard(unacked.UNACKED_INDEX_KEY) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert age_unacked(client, seconds=120) == 1
        assert recover(p.app, older_than=LONG) == []
    assert enqueue_counts(p.db_url, ["held"]) == {"held": 1}


def test_a_heartbeat_says_alive_until_its_key_expires(redis_url: str) -> None:
    with redis.Redis.from_url(redis_url) as client:
        heartbeat.beat(client, "a@host/1", "a@host", ttl_s=30)
        heartbeat.beat(client, "b@host/2", "b@host", ttl_s=30)
        assert 0 < client.ttl(heartbeat.heartbeat_key("a@host/1")) <= 30
        client.delete(heartbeat.heartbeat_key("b@host/2"))  # as if it had expired
        owners = ["a@host/1", "b@host/2", "a@host/0"]  # a@host/0: an earlier start of a@host
        assert heartbeat.alive_owners(client, owners) == {"a@host/1"}
        assert heartbeat.live_nodes(client) == {"a@host"}


def test_lost_work_is_re_enqueued_once_while_its_new_attempt_waits(
    pipeline: Callable[..., Pipeline],
) -> None:
    p = pipeline()
    p.client.submit(submission("lost"))
    claim(p.db_url, "lost", "dead@host/1", seconds_ago=120)
    assert recover(p.app, older_than=LONG) == ["lost"]
    # No worker has claimed attempt 2 yet (a backlog): it is waiting work, not lost again.
    assert recover(p.app, older_than=LONG) == []
    assert enqueue_counts(p.db_url, ["lost"]) == {"lost": 2}


def test_a_tier_a_live_worker_still_runs_is_not_sent_again(
    pipeline: Callable[..., Pipeline],
) -> None:
    """Tier 1 was lost with its worker; tier 3 of the same run is busy on a live one: only tier 1
    goes out again, and tier 3 keeps its owner (sending it again would run it twice)."""
    p = pipeline()
    p.client.submit(submission("half-lost"))  # attempt 1: one tier-1 and one tier-3 message
    claim(p.db_url, "half-lost", "dead@host/1", seconds_ago=120)
    claim(p.db_url, "half-lost", "live@host/2", seconds_ago=120, tier="graph")
    with redis.Redis.from_url(p.redis_url) as client:
        heartbeat.beat(client, "live@host/2", "live@host", ttl_s=30)
        assert recover(p.app, older_than=LONG) == ["half-lost"]
        assert (client.llen(TEXT_QUEUE), client.llen(GRAPH_QUEUE)) == (2, 1)
    with session_scope(p.db_url) as session:
        rows = queries.tier_results(session, submission_id="half-lost")
        assert (rows["text"].owner, rows["graph"].owner) == (None, "live@host/2")


def age_rows(url: str, sid: str, *, seconds: float) -> None:
    """Make ``sid`` and its tier rows look unchanged for ``seconds``."""
    then = utcnow() - timedelta(seconds=seconds)
    with session_scope(url) as session:
        queries.get_submission_row(session, submission_id=sid).updated_at = then
        for row in queries.tier_results(session, submission_id=sid).values():
            row.updated_at = then


def test_a_submission_whose_messages_the_broker_dropped_is_re_enqueued_once(
    pipeline: Callable[..., Pipeline],
) -> None:
    """A broker restart can lose a message a worker had taken (gone from its queue, never in
    ``unacked``); the sweep sends what is missing once the run has been idle EVALQ_LOST_AFTER_S,
    and leaves a run whose messages wait in the queues alone, however long it waits."""
    p = pipeline()
    p.client.submit_many([submission("dropped"), submission("waiting")])
    with p.app.connection_for_write() as connection:
        message = connection.default_channel.basic_get(queue=TEXT_QUEUE, no_ack=True)
        assert message is not None and message.headers["id"] == "dropped:text:1"
    for sid in ("dropped", "waiting"):
        age_rows(p.db_url, sid, seconds=120)
    assert recover(p.app, older_than=LONG) == ["dropped"]
    with redis.Redis.from_url(p.redis_url) as client:
        assert client.llen(TEXT_QUEUE) == 2  # "waiting" attempt 1 and "dropped" attempt 2 only
        assert client.llen(GRAPH_QUEUE) == 2  # "dropped"'s tier 3 was waiting: not sent again
    age_rows(p.db_url, "dropped", seconds=120)
    assert recover(p.app, older_than=LONG) == []  # its new tier 1 waits in the queue now
    assert enqueue_counts(p.db_url, ["dropped", "waiting"]) == {"dropped": 2, "waiting": 1}


def test_a_tier_its_live_worker_no_longer_runs_is_sent_again_and_finishes(
    pipeline: Callable[..., Pipeline],
) -> None:
    """On a connection loss Celery cancels the tier a worker runs; the worker lives on (its
    heartbeat is fresh) but its tier row stays ``running`` under it. The sweep sends that tier
    again, and the run finishes ``done`` instead of its merge waiting and degrading it."""
    p = pipeline()
    with session_scope(p.db_url) as session:
        run = Submission.model_validate(submission("cancelled"))
        queries.add_submission(session, submission=run, cost_usd=None)
        queries.begin_enqueue(session, submission_id="cancelled")  # its messages are gone
    with embedded_worker(p.app) as worker, redis.Redis.from_url(p.redis_url) as client:
        owner = f"{worker.hostname}/1"
        heartbeat.beat(client, owner, worker.hostname, ttl_s=60)
        claim(p.db_url, "cancelled", owner, seconds_ago=120)
        age_rows(p.db_url, "cancelled", seconds=120)
        assert recover(p.app, older_than=LONG) == ["cancelled"]
        deadline = time.monotonic() + 60 * PATIENCE
        while time.monotonic() < deadline:
            with session_scope(p.db_url) as session:
                row = queries.get_submission_row(session, submission_id="cancelled")
                if row.status not in ("queued", "running"):
                    break
            time.sleep(0.2)
    with session_scope(p.db_url) as session:
        assert queries.get_submission_row(session, submission_id="cancelled").status == "done"
        text = queries.tier_results(session, submission_id="cancelled")["text"]
        assert (text.status, text.deliveries) == ("ok", 2)


def test_waiting_messages_are_read_without_being_taken_up_to_the_scan_limit(
    pipeline: Callable[..., Pipeline],
) -> None:
    p = pipeline()
    p.client.submit_many([submission("first"), submission("second")])
    with redis.Redis.from_url(p.redis_url) as client:
        waiting = queued.queued_task_ids(client, QUEUES)
        assert waiting is not None and {"first:text:1", "second:text:1"} <= waiting
        assert client.llen(TEXT_QUEUE) == 2  # read, not taken
        assert queued.queued_task_ids(client, QUEUES, limit=len(waiting) - 1) is None
