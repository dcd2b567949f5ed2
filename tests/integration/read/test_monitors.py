"""Monitors at scale (issue 45, G-4 and G-5): bounded in number, listed a page at a time in
a fixed number of statements, served on /metrics per task, and one check's alerts coalesced
into one event per webhook.

The store is a fresh SQLite one; runs of a task with nothing to fan out are merged at intake
(no worker); monitors past the first few are stored directly, as a store holding them would."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import insert, select
from tests.integration.read.test_select_counts import counted
from tests.support.databases import fresh_database, private_redis
from tests.support.settings import REDIS_TEST_DB
from tests.support.webhook_receiver import TEST_WEBHOOK_KEY

from evalq.core.errors import InvalidInput
from evalq.core.monitors import MonitorRequest, store_cap_rule, task_cap_rule
from evalq.core.settings import Settings
from evalq.core.webhooks import MAX_WEBHOOKS_PER_TASK
from evalq.read import monitors
from evalq.service.client import Client
from evalq.store.db import session_scope
from evalq.store.models import MonitorRow, MonitorStateRow, WebhookDeliveryRow, utcnow

TASKS = ("watch-a", "watch-b")
ALWAYS_ALERT = {"tasks": "watch-*", "alert": 1e9, "min_n": 1, "last_runs": 5}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Client]:
    with fresh_database("sqlite", tmp_path) as url, private_redis(REDIS_TEST_DB) as broker:
        settings = Settings(
            database_url=url,
            broker_url=broker,
            webhook_key=TEST_WEBHOOK_KEY,
            webhook_allow_private=True,
            monitor_max=2000,
        )
        client = Client(settings)
        for task_id in TASKS:
            client.put_task({"id": task_id, "category": "debugging"})
        yield client
        client.app.close()


def _store_monitors(client: Client, names: list[str], *, states: bool = True) -> None:
    """Monitors ``names`` (watching every task here), each in "no data" on each task."""
    now = utcnow()
    definition = MonitorRequest.model_validate(ALWAYS_ALERT).model_dump(mode="json")
    rows = [
        {"name": n, "definition": definition, "created_at": now, "updated_at": now} for n in names
    ]
    kept: list[dict[str, Any]] = [
        {
            "monitor": n,
            "task_id": t,
            "state": "no data",
            "n": 0,
            "evaluated_at": now,
            "changed_at": now,
            "notices": 0,
        }
        for n in names
        for t in TASKS
    ]
    with session_scope(client.url) as session:
        session.execute(insert(MonitorRow), rows)
        if states:
            session.execute(insert(MonitorStateRow), kept)


def _names(n: int) -> list[str]:
    return [f"m{i:04d}" for i in range(n)]


def test_one_monitor_past_the_store_cap_is_refused_naming_the_rule(client: Client) -> None:
    capped = client.settings.model_copy(update={"monitor_max": 1000, "monitor_max_per_task": 2000})
    client = Client(capped, app=client.app)
    _store_monitors(client, _names(999))
    client.set_monitor("m0999", ALWAYS_ALERT)  # the thousandth: at the cap
    with pytest.raises(InvalidInput) as refused:
        client.set_monitor("m1000", ALWAYS_ALERT)
    assert refused.value.problems == [("name", store_cap_rule(1000))]
    client.set_monitor("m0999", ALWAYS_ALERT | {"alert": 5})  # replacing one is no new one
    with session_scope(client.url) as session:
        assert len(session.scalars(select(MonitorRow.name)).all()) == 1000  # nothing stored


def test_one_monitor_past_the_per_task_cap_is_refused_naming_the_task(client: Client) -> None:
    _store_monitors(client, _names(client.settings.monitor_max_per_task))
    with pytest.raises(InvalidInput) as refused:
        client.set_monitor("one-more", ALWAYS_ALERT | {"tasks": "watch-b"})
    cap = client.settings.monitor_max_per_task
    assert refused.value.problems == [("tasks", task_cap_rule("watch-b", cap))]
    # a monitor of a task nobody watches yet is taken
    client.put_task({"id": "other", "category": "debugging"})
    assert client.set_monitor("one-more", ALWAYS_ALERT | {"tasks": "other"}).name == "one-more"


def test_a_thousand_monitors_are_listed_a_page_at_a_time_in_two_statements(
    client: Client,
) -> None:
    _store_monitors(client, _names(1000))
    with session_scope(client.url) as session, counted(session) as statements:
        page = monitors.list_monitors(session, limit=100)
    assert [m.name for m in page.monitors] == _names(100) and page.next == "m0099"
    assert all(len(m.states) == len(TASKS) for m in page.monitors)
    assert len(statements) == 2, statements  # the page's monitors, then their states
    with session_scope(client.url) as session, counted(session) as statements:
        last = monitors.list_monitors(session, after="m0899", limit=100)
    assert [m.name for m in last.monitors] == _names(1000)[900:] and last.next is None
    assert len(statements) == 2, statements
    listed = client.monitors()  # every page, 500 at most each
    assert [m.name for m in listed] == _names(1000)


def test_metrics_count_a_thousand_monitors_per_task_and_state(client: Client) -> None:
    _store_monitors(client, _names(1000))
    with session_scope(client.url) as session, counted(session) as statements:
        held = monitors.state_counts(session)
    assert len(statements) == 1
    assert held == {t: {"ok": 0, "warning": 0, "alert": 0, "no data": 1000} for t in TASKS}


def test_one_run_alerts_twenty_webhooks_in_at_most_twenty_deliveries(client: Client) -> None:
    cap = client.settings.monitor_max_per_task
    _store_monitors(client, _names(cap), states=False)
    hooks = [
        client.add_webhook("watch-a", {"url": f"http://127.0.0.1:9/hook-{n}"}).id
        for n in range(MAX_WEBHOOKS_PER_TASK)
    ]
    run = {"id": "r1", "task_id": "watch-a", "tool": "t", "model": "m", "output": "Done."}
    client.submit(run | {"usage": {"total_tokens": 10}})  # merged at intake: one run in
    with session_scope(client.url) as session:
        due = monitors.check(session, settings=client.settings, task_ids=["watch-a"])
    assert len(due) == MAX_WEBHOOKS_PER_TASK  # not monitors x webhooks (1,000)
    with session_scope(client.url) as session:
        rows = session.scalars(
            select(WebhookDeliveryRow).where(WebhookDeliveryRow.submission_id.is_(None))
        ).all()
        assert sorted(r.webhook_id for r in rows) == sorted(hooks)
        payloads = [r.payload for r in rows]
        assert {r.event for r in rows} == {"monitor.alert"}
    for payload in payloads:
        assert payload is not None and payload["task_id"] == "watch-a"
        assert [m["monitor"] for m in payload["monitors"]] == _names(cap)
        assert {(m["event"], m["state"]) for m in payload["monitors"]} == {
            ("monitor.alert", "alert")
        }
    with session_scope(client.url) as session:  # checked again: nothing new to tell
        assert monitors.check(session, settings=client.settings, task_ids=["watch-a"]) == []
