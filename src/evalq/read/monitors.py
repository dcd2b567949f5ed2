"""Monitors: set, list, remove, and check them (each watched task's state, the events due).

`check` is called after a task's debounced refresh (its runs merged and its standings
current) and on the beat (a window of hours empties as time passes). It reads each task's
window from the boards' read model, decides the state (`evalq.scoring.monitor`), and stores
the state and, for a change worth telling, one pending delivery per webhook of the task, in one
transaction: the caller sends them once it has committed (`evalq.tasks.monitors`).
"""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from evalq.core.monitors import (
    Monitor,
    MonitorEvent,
    MonitorList,
    MonitorRequest,
    MonitorState,
    TaskMonitorState,
    parse_monitor,
)
from evalq.read.anytime import monitor_state
from evalq.scoring.kinds import KindRule, kind_of
from evalq.scoring.monitor import Notified, event_of
from evalq.stats.window import window_statistic
from evalq.store import monitors as store
from evalq.store import queries, webhooks
from evalq.store import standings as table
from evalq.store.models import MonitorRow, MonitorStateRow, TaskRow, utcnow
from evalq.store.upsert import upsert
from evalq.store.webhooks import as_utc


def set_monitor(
    session: Session, *, name: str, data: Any, created_by: str | None = None
) -> tuple[Monitor, list[str]]:
    """Create or replace the monitor ``name`` and check it at once: the monitor with its
    tasks' states, and the deliveries stored (to send once committed, as `check`'s).

    Raises:
        InvalidInput: a bad name or definition, naming the field and the rule (nothing stored).
    """
    request = parse_monitor(name, data)
    store.put_monitor(session, name=name, request=request, created_by=created_by)
    session.flush()
    due = check(session, names=[name])
    return get_monitor(session, name=name), due


def get_monitor(session: Session, *, name: str) -> Monitor:
    """One monitor with its tasks' states; `NotFound` when there is none."""
    row = store.get_monitor(session, name=name)
    return _monitor(row, store.states(session, names=[name]))


def list_monitors(session: Session) -> MonitorList:
    """Every monitor with its tasks' states, by name."""
    found = store.states(session)
    return MonitorList(
        monitors=[
            _monitor(row, [s for s in found if s.monitor == row.name])
            for row in store.all_monitors(session)
        ]
    )


def remove_monitor(session: Session, *, name: str) -> None:
    """Remove a monitor and its states (`NotFound` if unknown); events under way still go."""
    store.remove_monitor(session, name=name)


def task_monitors(
    session: Session, *, task_ids: Collection[str]
) -> dict[str, list[tuple[str, TaskMonitorState]]]:
    """Each task's states under the monitors that watch it, as (monitor, state) by monitor
    name: what the tasks page and a board show."""
    found: dict[str, list[tuple[str, TaskMonitorState]]] = {}
    for row in store.states(session, task_ids=task_ids):
        found.setdefault(row.task_id, []).append((row.monitor, _state(row)))
    return found


def _monitor(row: MonitorRow, states: list[MonitorStateRow]) -> Monitor:
    definition = MonitorRequest.model_validate(row.definition)
    return Monitor(
        name=row.name,
        definition=definition,
        window=definition.window(),
        created_at=as_utc(row.created_at),
        created_by=row.created_by,
        states=[_state(s) for s in states],
    )


def _state(row: MonitorStateRow) -> TaskMonitorState:
    return TaskMonitorState.model_validate(
        {
            "task_id": row.task_id,
            "state": row.state,
            "value": row.value,
            "n": row.n,
            "evaluated_at": as_utc(row.evaluated_at),
            "changed_at": as_utc(row.changed_at),
            "notified": row.notified,
            "notified_at": None if row.notified_at is None else as_utc(row.notified_at),
        }
    )


def _matches(pattern: str, task_id: str) -> bool:
    return task_id == pattern or fnmatch.fnmatchcase(task_id, pattern)


def check(
    session: Session,
    *,
    task_ids: Collection[str] | None = None,
    names: Collection[str] | None = None,
    now: datetime | None = None,
) -> list[str]:
    """Check the monitors (``names``, or all) on their tasks (those in ``task_ids``, or all
    they name); store each task's state and the events due. Returns the ids of the deliveries
    stored, to be sent once the transaction commits."""
    now = now or utcnow()
    known = list(session.scalars(select(TaskRow.id).order_by(TaskRow.id)))
    rules: dict[str, KindRule] = {}
    due: list[str] = []
    for row in store.all_monitors(session):
        if names is not None and row.name not in names:
            continue
        monitor = MonitorRequest.model_validate(row.definition)
        for task_id in known:
            if not _matches(monitor.tasks, task_id):
                continue
            if task_ids is not None and task_id not in task_ids:
                continue
            if task_id not in rules:
                rules[task_id] = _rule(session, task_id)
            due += _check_task(session, row, monitor, task_id, rules[task_id], now)
    return due


def _rule(session: Session, task_id: str) -> KindRule:
    task = queries.get_task(session, task_id=task_id)
    has_variants, has_scenarios = table.kind_evidence(session, task_id=task_id)
    return kind_of(task, has_variants=has_variants, has_scenarios=has_scenarios)


def _check_task(
    session: Session,
    row: MonitorRow,
    monitor: MonitorRequest,
    task_id: str,
    rule: KindRule,
    now: datetime,
) -> list[str]:
    found = store.window(session, task_id=task_id, rule=rule, monitor=monitor, now=now)
    value = window_statistic(
        found.values, found.passed, statistic=monitor.statistic, q=monitor.quantile
    )
    state = monitor_state(rule=rule, monitor=monitor, found=found, value=value)
    upsert(  # the row exists from here on; a concurrent check waits for this one below
        session,
        MonitorStateRow.__table__,  # type: ignore[arg-type]
        values={
            "monitor": row.name,
            "task_id": task_id,
            "state": "no data",
            "n": 0,
            "evaluated_at": now,
            "changed_at": now,
            "notices": 0,
        },
        keys=["monitor", "task_id"],
        update={"monitor": row.name},
    )
    current = session.get(
        MonitorStateRow, (row.name, task_id), with_for_update=True, populate_existing=True
    )
    assert current is not None  # stored just above
    previous: MonitorState = current.state  # type: ignore[assignment]
    if previous != state:
        current.changed_at = now
    current.state, current.value, current.n, current.evaluated_at = (
        state,
        value,
        len(found.values),
        now,
    )
    last = Notified(
        current.notified,  # type: ignore[arg-type]
        current.notified_state,  # type: ignore[arg-type]
        None if current.notified_at is None else as_utc(current.notified_at),
    )
    renotify = (
        None if monitor.renotify_minutes is None else timedelta(minutes=monitor.renotify_minutes)
    )
    decided = event_of(state, last, now=now, renotify=renotify)
    if decided is None:
        return []
    kind, again = decided
    current.notices += 1
    current.notified, current.notified_state, current.notified_at = kind, state, now
    payload = MonitorEvent(
        monitor=row.name,
        task_id=task_id,
        state=state,
        previous=previous,
        value=value,
        n=len(found.values),
        statistic=monitor.statistic,
        quantile=monitor.quantile,
        window=monitor.window(),
        warning=monitor.warning,
        alert=monitor.alert,
        group=None if monitor.by is None else f"{monitor.by}={monitor.group}",
        renotify=again,
        at=now,
    ).model_dump(mode="json")
    subject = f"monitor\n{row.name}\n{as_utc(row.created_at).isoformat()}\n{task_id}"
    ids = []
    for webhook_id in webhooks.webhook_ids(session, task_id=task_id):
        digest = hashlib.sha256(f"{webhook_id}\n{subject}\n{current.notices}".encode())
        event_id = f"msg_{digest.hexdigest()[:32]}"
        webhooks.add_event(
            session, webhook_id=webhook_id, event_id=event_id, event=kind, payload=payload
        )
        ids.append(event_id)
    return ids


SCORE_WINDOW = 50
"""Runs a task's score gauge on /metrics is the mean of (its latest complete runs)."""


@dataclass(frozen=True)
class TaskScore:
    """A task's recent score as /metrics exposes it: the mean of the kind's ranking value
    (``key``: arena_overall_unadjusted, ...) over its latest `SCORE_WINDOW` complete runs
    (held runs and copies left out)."""

    task_id: str
    key: str
    mean: float
    runs: int


def task_scores(session: Session, *, now: datetime | None = None) -> list[TaskScore]:
    """Each task with at least one complete run: its recent mean score (one gauge per task and
    kind key, whatever the number of runs)."""
    now = now or utcnow()
    recent = MonitorRequest(tasks="*", last_runs=SCORE_WINDOW, alert=0, min_n=1)
    found = []
    for task_id in session.scalars(select(TaskRow.id).order_by(TaskRow.id)):
        rule = _rule(session, task_id)
        window = store.window(session, task_id=task_id, rule=rule, monitor=recent, now=now)
        mean = window_statistic(window.values, window.passed, statistic="mean")
        if mean is not None:
            found.append(
                TaskScore(task_id=task_id, key=rule.ranking_key, mean=mean, runs=len(window.values))
            )
    return found


def all_states(session: Session) -> list[tuple[str, TaskMonitorState]]:
    """Every monitor's tasks' states, as (monitor, state)."""
    return [(row.monitor, _state(row)) for row in store.states(session)]
