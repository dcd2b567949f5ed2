"""Webhook events at least once: an event is stored in the transaction that merges its run
(the outbox) and sent from there, so a broker that cannot take the message right after the
merge commits delays the event and never drops it.

The broker is a `redis-server` of the test's own (tests/support/redis_server.py), stopped
between the merge's commit and its publish: a run with nothing to fan out is merged at intake,
in the submitting process, which then publishes its events to the stopped broker. The real
PostgreSQL restart is the exclusive drill tests/drills/test_event_restart.py."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from tests.support.processes import wait_until
from tests.support.redis_server import RedisServer
from tests.support.settings import configure, pipeline_settings
from tests.support.webhook_receiver import TEST_WEBHOOK_KEY, Receiver, webhook_receiver

from evalq.core.webhooks import EVENT_TYPE
from evalq.service.client import Client
from evalq.store.models import utcnow
from evalq.tasks.webhooks import resend_events
from evalq.workers.bootstrap import worker_app
from evalq.workers.embedded import embedded_worker

pytestmark = pytest.mark.both_databases  # the outbox is rows written in the merge's transaction

BARE = {"id": "bare", "category": "debugging"}  # no references, no judge: merged at intake
RUN = {"id": "o1", "task_id": "bare", "tool": "t", "model": "m", "output": "Fixed it."}


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.stop()


def _evaluation_events(receiver: Receiver) -> list[dict[str, Any]]:
    with receiver.lock:
        verified = [r.verified for r in receiver.received if r.error is None]
    return [e for e in verified if e["type"] == EVENT_TYPE]


def test_an_event_the_broker_did_not_take_is_delivered_once_it_is_back(
    db_url: str, broker: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(
        monkeypatch,
        **pipeline_settings(
            db_url,
            broker.url,
            webhook_key=TEST_WEBHOOK_KEY,
            webhook_allow_private="true",
            broker_connect_timeout_s="1",
        ),
    )
    app = worker_app()
    client = Client(app=app)
    try:
        client.put_task(BARE)
        with webhook_receiver() as receiver:
            hook = client.add_webhook("bare", {"url": receiver.url})
            receiver.secret = hook.secret
            broker.stop()  # down between the merge's commit and the publish of its event
            client.submit(RUN | {"usage": {"total_tokens": 10}})
            assert client.status("o1") == "done"
            [stored] = client.webhook_deliveries("bare", hook.id)
            assert stored.status == "pending" and stored.attempts == 0
            assert stored.submission_id == "o1" and stored.event == EVENT_TYPE
            broker.start()
            with embedded_worker(app, concurrency=2):
                # not due yet: a message sent a moment ago may still be on its way
                assert resend_events(app) == []
                later = utcnow() + timedelta(seconds=client.settings.event_resend_after_s + 1)
                assert resend_events(app, now=later) == [stored.id]

                def delivered() -> bool:
                    [found] = client.webhook_deliveries("bare", hook.id)
                    return found.status == "delivered"

                wait_until(delivered, timeout=90, what="the event to be delivered")
    finally:
        app.close()
    [event] = _evaluation_events(receiver)
    assert event["data"]["id"] == "o1" and event["data"]["status"] == "done"
    assert receiver.ids() == [stored.id]  # the id the outbox stored, sent once
