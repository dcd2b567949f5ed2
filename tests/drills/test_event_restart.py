"""Drill: PostgreSQL restarted while runs are merged; every run's webhook event is delivered.

Each merge stores its events in its own transaction (the outbox) and sends them once it has
committed; a delivery whose store went away retries, and an event whose message was lost is
sent again by the event sweep (run here as the beat would). A receiver on 127.0.0.1 checks
every signature; at the end each run's `evaluation.completed` arrived, none was dropped.
Restarts the shared PostgreSQL: exclusive (make test runs it alone)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from evalq.core.settings import Settings
from evalq.core.webhooks import EVENT_TYPE
from evalq.service.client import Client
from evalq.tasks.webhooks import resend_events
from evalq.workers.app import make_app
from tests.drills import harness
from tests.drills.batch import TASK, ids, submit_batch
from tests.drills.test_postgres_restart import cluster, pg_ctl
from tests.support.processes import PATIENCE
from tests.support.services import PG_HOST, PG_PORT, reachable
from tests.support.settings import configure
from tests.support.webhook_receiver import TEST_WEBHOOK_KEY, webhook_receiver

N = 60


@pytest.mark.slow
@pytest.mark.exclusive  # restarts the shared PostgreSQL: make test runs it alone
@pytest.mark.timeout(900)
def test_postgres_restart_after_merges_drops_no_webhook_event(
    store_url: str, broker_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster()
    extra = {
        "webhook_key": TEST_WEBHOOK_KEY,
        "webhook_allow_private": "true",
        "webhook_backoff_s": "1",
        "event_resend_after_s": "10",
    }
    env = harness.drill_env(store_url, broker_url, **extra)
    configure(monkeypatch, database_url=store_url, broker_url=broker_url, **extra)
    settings = Settings()
    app = make_app(settings, producer=True)
    client = Client(settings, app=app)
    batch = ids(N, prefix="ev")
    with webhook_receiver() as receiver, harness.workers(env, tmp_path / "logs") as pool:
        client.put_task(TASK)
        hook = client.add_webhook(TASK.id, {"url": receiver.url})
        receiver.secret = hook.secret
        pool.start("a")
        submit_batch(env, batch)
        harness.wait_for(
            lambda: harness.finished(store_url) >= 15, timeout=300 * PATIENCE, what="15 done"
        )
        try:
            pg_ctl("restart")  # right after merges: events committed, their sends under way
            harness.wait_for(
                lambda: reachable(PG_HOST, PG_PORT), timeout=60 * PATIENCE, what="PostgreSQL"
            )
        finally:
            if not reachable(PG_HOST, PG_PORT):
                pg_ctl("start")
        harness.wait_for(
            lambda: harness.finished(store_url) == N,
            timeout=600 * PATIENCE,
            what=f"all {N} final",
            poll=1,
        )

        def every_event() -> bool:
            with receiver.lock:
                seen = {
                    r.verified["data"]["id"]
                    for r in receiver.received
                    if r.error is None and r.verified["type"] == EVENT_TYPE
                }
            if seen == set(batch):
                return True
            resend_events(app)  # the beat's event sweep
            return False

        harness.wait_for(every_event, timeout=300 * PATIENCE, what="every run's event", poll=2)
        time.sleep(2)
    app.close()
    deliveries = client.webhook_deliveries(TASK.id, hook.id, limit=1000)
    assert {d.submission_id for d in deliveries} == set(batch)
    assert {d.status for d in deliveries} == {"delivered"}
