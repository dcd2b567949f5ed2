"""A batch is stored in a fixed number of statements and published at once, all or nothing."""

from __future__ import annotations

import gc
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis
import redis.connection
from sqlalchemy import event, func, select

from evalq.core.errors import Conflict, InvalidInput
from evalq.core.settings import Settings
from evalq.service.client import Client
from evalq.service.submitted import Submitted
from evalq.store.db import engine_for, session_scope
from evalq.store.models import SubmissionRow, TierResultRow
from evalq.workers.names import QUEUES

pytestmark = pytest.mark.both_databases  # the database matters here (tests/conftest.py)

# With reference outputs, every run fans out (tier 1): these tests publish chords. A task with
# nothing to fan out is merged at intake (the last tests).
TASK = {
    "id": "t1",
    "category": "debugging",
    "success_criteria": [{"type": "no_errors"}],
    "reference_outputs": ["Fixed the date parser and added a regression test."],
}
BARE_TASK = {"id": "bare", "category": "debugging", "success_criteria": [{"type": "no_errors"}]}
STEPS = [{"tool": "read_file", "started_at": 1.0, "ended_at": 1.5, "agent": "aider"}]


def run(sid: str, *, trace: bool = True, **changes: Any) -> dict[str, Any]:
    """A small submission; its chord runs tier 1, and the graph tier when it has a trace."""
    usage = {"input_tokens": 800, "output_tokens": 200, "tool_calls": 3, "execution_time": 12}
    data = {"id": sid, "task_id": "t1", "tool": "aider", "model": "gpt-4o", "usage": usage}
    if trace:
        data["trace"] = {"steps": STEPS}
    return data | changes


@pytest.fixture
def client(db_url: str, redis_url: str) -> Iterator[Client]:
    """A client over a fresh store (SQLite and PostgreSQL) and a Redis broker, no workers."""
    client = Client(Settings(database_url=db_url, broker_url=redis_url, result_backend=redis_url))
    client.put_task(TASK)
    yield client
    client.app.close()


def stored(url: str) -> dict[str, tuple[str, int]]:
    """Status and enqueue count of every stored submission."""
    with session_scope(url) as session:
        rows = session.execute(
            select(SubmissionRow.id, SubmissionRow.status, SubmissionRow.enqueue_count)
        )
        return {row.id: (row.status, row.enqueue_count) for row in rows}


def waiting(url: str) -> int:
    """Messages waiting in evalq's queues."""
    broker = redis.Redis.from_url(url)
    try:
        return sum(int(broker.llen(queue)) for queue in QUEUES)
    finally:
        broker.close()


def test_a_batch_costs_the_same_statements_as_one_submission(client: Client) -> None:
    executed: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        executed.append(statement)

    engine = engine_for(client.url)
    event.listen(engine, "before_cursor_execute", count)
    try:
        counts = {}
        for size in (1, 10, 100):
            executed.clear()
            client.submit_many([run(f"n{size}-{i}", trace=i % 2 == 0) for i in range(size)])
            counts[size] = len(executed)
    finally:
        event.remove(engine, "before_cursor_execute", count)
    print(counts)  # was {1: 10, 10: 96, 100: 951}: several statements per submission
    assert counts[100] == counts[10] == counts[1] <= 6, counts
    assert stored(client.url) == {
        f"n{size}-{i}": ("queued", 1) for size in (1, 10, 100) for i in range(size)
    }
    # tier 1 of every submission, and the graph tier of those with a trace (56 of 111)
    assert waiting(client.settings.broker_url or "") == 111 + 56


def test_a_batch_publishes_every_chord_with_its_size(client: Client) -> None:
    client.submit_many([run("c1"), run("c2", trace=False)])
    broker = redis.Redis.from_url(client.settings.broker_url or "")
    try:
        sizes = [broker.get(key) for key in broker.scan_iter("celery-taskset-meta-*.s")]
        assert sorted(sizes) == [b"1", b"2"]  # c1's chord: tiers 1 and 3; c2's: tier 1
        assert waiting(client.settings.broker_url or "") == 3
    finally:
        broker.close()


def test_an_id_twice_in_one_batch_is_stored_once(client: Client) -> None:
    answer = client.submit_many([run("d1"), run("d2"), run("d1")])
    assert answer == [Submitted("d1", True), Submitted("d2", True), Submitted("d1", False)]
    assert stored(client.url) == {"d1": ("queued", 1), "d2": ("queued", 1)}
    assert waiting(client.settings.broker_url or "") == 4


def test_an_id_twice_with_different_content_stores_nothing(client: Client) -> None:
    with pytest.raises(Conflict, match="'e1' exists with different content"):
        client.submit_many([run("e1"), run("e2"), run("e1", model="gpt-4.1")])
    assert stored(client.url) == {}
    assert waiting(client.settings.broker_url or "") == 0


def test_a_conflicting_id_in_a_batch_stores_none_of_it(client: Client) -> None:
    client.submit(run("f1"))
    with pytest.raises(Conflict, match="'f1' exists with different content"):
        client.submit_many([run("f2"), run("f1", output="another run"), run("f3")])
    assert stored(client.url) == {"f1": ("queued", 1)}
    assert waiting(client.settings.broker_url or "") == 2


def test_an_unknown_task_in_a_batch_stores_none_of_it(client: Client) -> None:
    with pytest.raises(InvalidInput) as caught:
        client.submit_many([run("g1"), run("g2", task_id="nope")])
    assert caught.value.problems == [("task_id", "unknown task 'nope'; define it first")]
    with session_scope(client.url) as session:
        assert session.scalar(select(func.count()).select_from(TierResultRow)) == 0
    assert stored(client.url) == {}


def test_a_known_batch_again_answers_known_and_sends_nothing(client: Client) -> None:
    first = client.submit_many([run("h1"), run("h2", trace=False)])
    again = client.submit_many([run("h2", trace=False), run("h1"), run("h3")])
    assert [s.created for s in first] == [True, True]
    assert again == [Submitted("h2", False), Submitted("h1", False), Submitted("h3", True)]
    assert stored(client.url) == {f"h{i}": ("queued", 1) for i in (1, 2, 3)}
    assert waiting(client.settings.broker_url or "") == 5
    with session_scope(client.url) as session:  # skipped tiers stored with the new rows
        skipped = session.execute(
            select(TierResultRow.submission_id, TierResultRow.tier, TierResultRow.status)
        )
        assert sorted(skipped) == [
            ("h1", "judge", "skipped"),
            ("h2", "graph", "skipped"),
            ("h2", "judge", "skipped"),
            ("h3", "judge", "skipped"),
        ]


def test_publishing_a_chord_subscribes_to_no_result(client: Client) -> None:
    # A producer reads outcomes from the store. Each chord used to subscribe to its header's
    # result channel, never unsubscribed: the API's memory grew with every submission.
    prefix = uuid.uuid4().hex[:8]  # Pub/Sub channels are shared by every Redis database
    client.submit_many([run(f"{prefix}-{i}") for i in range(5)])
    client.submit(run(f"{prefix}-one"))
    broker = redis.Redis.from_url(client.settings.broker_url or "")
    try:
        assert broker.pubsub_channels(f"celery-task-meta-{prefix}-*") == []
    finally:
        broker.close()


def test_a_batch_reaches_redis_in_as_many_sends_as_one_submission(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    client.submit_many([run("warm-1"), run("warm-2", trace=False)])  # queues declared once
    sends: list[object] = []
    send = redis.connection.Connection.send_packed_command
    caller = threading.get_ident()

    def counted(self: Any, command: Any, check_health: bool = True) -> None:
        if threading.get_ident() == caller:  # not a thread an earlier test left polling Redis
            sends.append(command)
        send(self, command, check_health)

    monkeypatch.setattr(redis.connection.Connection, "send_packed_command", counted)
    counts = {}
    seen: dict[int, list[str]] = {}
    for size in (1, 10, 100):
        # no garbage collection while counting: an earlier test's clients, collected here, close
        # their Redis connections from this thread (sends that are not this batch's)
        gc.collect()
        gc.disable()
        try:
            sends.clear()
            client.submit_many([run(f"r{size}-{i}", trace=i % 2 == 0) for i in range(size)])
            counts[size] = len(sends)
            seen[size] = [repr(command)[:120] for command in sends]
        finally:
            gc.enable()
    # chord sizes in one pipeline, every task and task-sent event in another; it was 35 and
    # 350 for 10 and 100 (a subscription, a chord size, a task and its event, each sent alone)
    assert counts[100] == counts[10] == counts[1] == 2, (counts, seen[100][:6])


def test_a_batch_with_nothing_to_fan_out_is_merged_in_the_same_statements_whatever_its_size(
    client: Client,
) -> None:
    client.put_task(BARE_TASK)  # no references, no judge: a run with a trace has tier 3 alone
    executed: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        executed.append(statement)

    engine = engine_for(client.url)
    client.submit_many([run("warm", task_id="bare")])  # the task's refresh claimed once
    event.listen(engine, "before_cursor_execute", count)
    try:
        counts = {}
        for size in (1, 10, 100):
            executed.clear()
            batch = [run(f"m{size}-{i}", task_id="bare", trace=i % 2 == 0) for i in range(size)]
            client.submit_many(batch)
            counts[size] = len(executed)
    finally:
        event.remove(engine, "before_cursor_execute", count)
    assert counts[100] == counts[10] == counts[1], counts
    assert set(stored(client.url).values()) == {("done", 1)}
    with session_scope(client.url) as session:
        graph = session.scalars(
            select(TierResultRow.status).where(
                TierResultRow.tier == "graph", TierResultRow.submission_id.like("m100-%")
            )
        )
        assert sorted(graph) == ["ok"] * 50 + ["skipped"] * 50
    assert waiting(client.settings.broker_url or "") == 1  # the task's refresh, nothing else
