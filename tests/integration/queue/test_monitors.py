"""Monitors through the real queue: Redis broker, a real store, an embedded worker, and a
receiver on 127.0.0.1 that checks every signature with standardwebhooks' own verifier.

The suite example's release candidate scores 0.927 (its gate passes) and its prompt-leak run
0.709: a monitor of the mean over the last three runs (warning under 0.9, alert under 0.8)
sees no data, then ok, then a drop, then the recovery, each after the task's debounced
refresh (no test calls a check on the way)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from tests.support.another_run import another_run
from tests.support.pipeline import Pipeline
from tests.support.processes import PATIENCE, wait_until
from tests.support.webhook_receiver import TEST_WEBHOOK_KEY, Receiver, webhook_receiver

from evalq.core.monitors import Monitor
from evalq.core.schemas import Task
from evalq.producer.cli import EXAMPLES
from evalq.read import monitors
from evalq.store.db import session_scope
from evalq.store.models import utcnow
from evalq.tasks.monitors import check_monitors
from evalq.workers.embedded import embedded_worker

pytestmark = pytest.mark.both_databases  # the states and deliveries are rows (tests/conftest.py)

SUITE = "suite-refund-agent"
MONITOR = {
    "tasks": "suite-*",
    "statistic": "mean",
    "last_runs": 3,
    "min_n": 3,
    "warning": 0.9,
    "alert": 0.8,
}


def _suite_task() -> Task:
    definitions = json.loads((EXAMPLES / "tasks.json").read_text())
    return Task.model_validate(next(t for t in definitions if t["id"] == SUITE))


def _runs(kind: str, start: int) -> list[dict[str, Any]]:
    """Three runs of the example ``kind`` (0: passes, 1: blocked), each a run of its own (a copy,
    or the example padded with its usage unchanged, would count once)."""
    lines = (EXAMPLES / "suite.jsonl").read_text().splitlines()
    run = json.loads(lines[kind])
    return [another_run(run, f"mon-{n}", f"(run {n})", n=n + 1) for n in range(start, start + 3)]


def _state(p: Pipeline) -> Monitor:
    return p.client.monitor("refunds")


def _events(receiver: Receiver) -> list[dict[str, Any]]:
    """The monitor's events received, verified (the webhook hears of each evaluation too)."""
    with receiver.lock:
        verified = [r.verified for r in receiver.received if r.error is None]
    return [event for event in verified if event["type"].startswith("monitor.")]


def _submit_and_settle(
    p: Pipeline, runs: list[dict[str, Any]], state: str, receiver: Receiver, events: int
) -> None:
    ids = [s.id for s in p.client.submit_many(runs)]
    assert set(p.client.wait(ids, timeout=180 * PATIENCE).values()) == {"done"}

    def settled() -> bool:
        states = _state(p).states
        return bool(states) and states[0].state == state and len(_events(receiver)) == events

    wait_until(settled, timeout=90, what=f"the monitor to say {state} after {events} event(s)")


def test_a_drop_alerts_once_recovery_resolves_once_and_no_data_says_so(
    pipeline: Callable[..., Pipeline],
) -> None:
    p = pipeline(webhook_key=TEST_WEBHOOK_KEY, webhook_allow_private="true")
    p.client.put_task(_suite_task())
    with webhook_receiver() as receiver, embedded_worker(p.app, concurrency=4):
        hook = p.client.add_webhook(SUITE, {"url": receiver.url})
        receiver.secret = hook.secret
        # no runs yet: the monitor shows no data, and nothing is sent
        found = p.client.set_monitor("refunds", MONITOR)
        ((state),) = found.states
        assert state.task_id == SUITE and state.state == "no data" and state.n == 0
        assert check_monitors() == 0
        _submit_and_settle(p, _runs(0, 0), "ok", receiver, events=0)
        _submit_and_settle(p, _runs(1, 3), "alert", receiver, events=1)
        # checked again (the beat): still alert, nothing new
        assert check_monitors() == 0
        _submit_and_settle(p, _runs(0, 6), "ok", receiver, events=2)
        wait_until(
            lambda: all(
                d.status == "delivered" for d in p.client.webhook_deliveries(SUITE, hook.id)
            ),
            timeout=60,
            what="both deliveries to be delivered",
        )
    assert [r.error for r in receiver.received] == [None] * (9 + 2)  # 9 evaluations, 2 changes
    alert, resolved = _events(receiver)
    assert alert["type"] == "monitor.alert" and resolved["type"] == "monitor.resolved"
    assert alert["data"]["task_id"] == SUITE and resolved["data"]["task_id"] == SUITE
    ((fired),) = alert["data"]["monitors"]
    assert fired["event"] == "monitor.alert"
    assert fired["monitor"] == "refunds" and fired["task_id"] == SUITE
    assert fired["state"] == "alert" and fired["previous"] == "ok"
    assert fired["value"] == pytest.approx(0.7088, abs=1e-3)
    assert fired["n"] == 3 and fired["renotify"] is False
    ((back),) = resolved["data"]["monitors"]
    assert back["event"] == "monitor.resolved"
    assert back["state"] == "ok" and back["previous"] == "alert"
    assert back["value"] == pytest.approx(0.9269, abs=1e-3)
    ids = [r.headers["webhook-id"] for r in receiver.received if r.verified in (alert, resolved)]
    assert len(set(ids)) == 2
    deliveries = p.client.webhook_deliveries(SUITE, hook.id)
    monitor_events = {d.id: d for d in deliveries if d.submission_id is None}
    assert set(monitor_events) == set(ids)
    assert {d.event for d in monitor_events.values()} == {"monitor.alert", "monitor.resolved"}


def test_renotify_sends_the_alert_again_once_due_and_not_before(
    pipeline: Callable[..., Pipeline],
) -> None:
    """The beat's check at a later time (``now`` given: no test waits for a clock)."""
    p = pipeline(webhook_key=TEST_WEBHOOK_KEY, webhook_allow_private="true")
    p.client.put_task(_suite_task())
    with webhook_receiver() as receiver, embedded_worker(p.app, concurrency=4):
        hook = p.client.add_webhook(SUITE, {"url": receiver.url})
        receiver.secret = hook.secret
        p.client.set_monitor("refunds", MONITOR | {"renotify_minutes": 30})
        _submit_and_settle(p, _runs(1, 0), "alert", receiver, events=1)
    later = utcnow() + timedelta(minutes=29)
    settings = p.client.settings
    with session_scope(p.db_url) as session:
        assert monitors.check(session, settings=settings, now=later) == []
    with session_scope(p.db_url) as session:
        (again,) = monitors.check(session, settings=settings, now=later + timedelta(minutes=2))
    with session_scope(p.db_url) as session:
        assert monitors.check(session, settings=settings, now=later + timedelta(minutes=3)) == []
    deliveries = {d.id: d for d in p.client.webhook_deliveries(SUITE, hook.id)}
    assert deliveries[again].event == "monitor.alert" and deliveries[again].status == "pending"
    assert len([d for d in deliveries.values() if d.submission_id is None]) == 2
