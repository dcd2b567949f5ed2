"""Monitors: set, list, remove, and check them (each watched task's state, the events due).

`check` is called after a task's debounced refresh (its runs merged and its standings
current) and on the beat (a window of hours empties as time passes). It reads each task's
window from the boards' read model, decides the state (`evalq.scoring.monitor`), and stores
the state and, for the changes worth telling, one pending delivery per webhook of the task
carrying every monitor that changed (`MonitorEvents`), in one transaction: the caller sends
them once it has committed (`evalq.tasks.monitors`).

Monitors are bounded: EVALQ_MONITOR_MAX in the store, EVALQ_MONITOR_MAX_PER_TASK watching one
task (a definition past either is refused naming the rule; a task created later that more
monitors name is checked under the first of them by name). So a check reads at most that many
windows per task, and a task's event names at most that many monitors.
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

from evalq.core.errors import InvalidInput
from evalq.core.monitors import (
    MONITOR_STATES,
    PAGE_DEFAULT,
    Monitor,
    MonitorEvent,
    MonitorEvents,
    MonitorEventType,
    MonitorList,
    MonitorRequest,
    MonitorState,
    TaskMonitorState,
    parse_monitor,
    store_cap_rule,
    task_cap_rule,
)
from evalq.core.settings import Settings
from evalq.read.anytime import monitor_state
from evalq.scoring.kinds import KindRule
from evalq.scoring.monitor import Notified, event_of
from evalq.stats.window import window_statistic
from evalq.store import monitors as store
from evalq.store import task_kinds, webhooks
from evalq.store.models import MonitorRow, MonitorStateRow, TaskRow, utcnow
from evalq.store.upsert import upsert
from evalq.store.webhooks import as_utc


def set_monitor(
    session: Session,
    *,
    name: str,
    data: Any,
    settings: Settings,
    created_by: str | None = None,
) -> tuple[Monitor, list[str]]:
    """Create or replace the monitor ``name`` and check it at once: the monitor with its
    tasks' states, and the deliveries stored (to send once committed, as `check`'s).

    Raises:
        InvalidInput: a bad name or definition, or one monitor past EVALQ_MONITOR_MAX or
            EVALQ_MONITOR_MAX_PER_TASK, naming the field and the rule (nothing stored).
    """
    request = parse_monitor(name, data)
    _within_caps(session, name=name, request=request, settings=settings)
    store.put_monitor(session, name=name, request=request, created_by=created_by)
    session.flush()
    due = check(session, names=[name], settings=settings)
    return get_monitor(session, name=name), due


def _within_caps(
    session: Session, *, name: str, request: MonitorRequest, settings: Settings
) -> None:
    """Refuse (`InvalidInput`) a new monitor past the store's cap, or one that would watch a
    stored task the per-task cap of other monitors watch already."""
    others = [row for row in store.all_monitors(session) if row.name != name]
    if len(others) >= settings.monitor_max:
        raise InvalidInput([("name", store_cap_rule(settings.monitor_max))])
    patterns = [MonitorRequest.model_validate(row.definition).tasks for row in others]
    for task_id in session.scalars(select(TaskRow.id).order_by(TaskRow.id)):
        if not _matches(request.tasks, task_id):
            continue
        watching = sum(1 for pattern in patterns if _matches(pattern, task_id))
        if watching >= settings.monitor_max_per_task:
            raise InvalidInput([("tasks", task_cap_rule(task_id, settings.monitor_max_per_task))])


def get_monitor(session: Session, *, name: str) -> Monitor:
    """One monitor with its tasks' states; `NotFound` when there is none."""
    row = store.get_monitor(session, name=name)
    return _with_judge_breaks(session, [_monitor(row, store.states(session, names=[name]))])[0]


def _judge_break(session: Session, task_id: str) -> str | None:
    """The task's "judge changed" mark (`evalq.read.judge_series`) when its scores mix judges."""
    from evalq.read.judge_series import mixed_judges

    found = mixed_judges(session, task_ids=[task_id]).get(task_id)
    return None if found is None else found.mark


def _with_judge_breaks(session: Session, monitors: list[Monitor]) -> list[Monitor]:
    """``monitors`` with each state of a task whose scores mix judges marked (one read)."""
    from evalq.read.judge_series import mixed_judges

    task_ids = sorted({s.task_id for m in monitors for s in m.states})
    mixed = mixed_judges(session, task_ids=task_ids) if task_ids else {}
    if not mixed:
        return monitors
    return [
        m.model_copy(
            update={
                "states": [
                    s
                    if s.task_id not in mixed
                    else s.model_copy(update={"judge_break": mixed[s.task_id].mark})
                    for s in m.states
                ]
            }
        )
        for m in monitors
    ]


def list_monitors(
    session: Session, *, after: str | None = None, limit: int = PAGE_DEFAULT
) -> MonitorList:
    """A page of monitors by name (those after ``after``, at most ``limit``), each with its
    tasks' states: two statements, whatever the number of monitors and states."""
    rows = store.monitors_page(session, after=after, limit=limit + 1)
    page = rows[:limit]
    by_monitor: dict[str, list[MonitorStateRow]] = {row.name: [] for row in page}
    for state in store.states(session, names=list(by_monitor)):
        by_monitor[state.monitor].append(state)
    return MonitorList(
        monitors=[_monitor(row, by_monitor[row.name]) for row in page],
        next=page[-1].name if len(rows) > limit else None,
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
    settings: Settings,
    task_ids: Collection[str] | None = None,
    names: Collection[str] | None = None,
    now: datetime | None = None,
) -> list[str]:
    """Check the monitors (``names``, or all) on their tasks (those in ``task_ids``, or all
    they name); store each task's state and, per task, one event per webhook carrying every
    monitor that changed. Returns the ids of the deliveries stored, to be sent once the
    transaction commits."""
    now = now or utcnow()
    due: list[str] = []
    for task_id, watching in watchers(session, settings=settings, task_ids=task_ids).items():
        chosen = [(row, m) for row, m in watching if names is None or row.name in names]
        if not chosen:
            continue
        rule = _rule(session, task_id)
        changes = [
            change
            for row, monitor in chosen
            if (change := _check_task(session, row, monitor, task_id, rule, now)) is not None
        ]
        if changes:
            due += _store_events(session, task_id, changes, now, settings)
    return due


def watchers(
    session: Session, *, settings: Settings, task_ids: Collection[str] | None = None
) -> dict[str, list[tuple[MonitorRow, MonitorRequest]]]:
    """Each stored task (of ``task_ids``, or every one) with the monitors that watch it, by
    name: at most EVALQ_MONITOR_MAX_PER_TASK, the first by name (tasks no monitor watches are
    left out)."""
    monitors = [
        (row, MonitorRequest.model_validate(row.definition)) for row in store.all_monitors(session)
    ]
    if not monitors:
        return {}
    query = select(TaskRow.id).order_by(TaskRow.id)
    if task_ids is not None:
        query = query.where(TaskRow.id.in_(list(task_ids)))
    found: dict[str, list[tuple[MonitorRow, MonitorRequest]]] = {}
    for task_id in session.scalars(query):
        watching = [(row, m) for row, m in monitors if _matches(m.tasks, task_id)]
        if watching:
            found[task_id] = watching[: settings.monitor_max_per_task]
    return found


@dataclass(frozen=True)
class Change:
    """A monitor whose state on a task is worth an event, and the notice it counts as."""

    monitor: MonitorRow
    kind: MonitorEventType
    notices: int
    event: MonitorEvent


def _store_events(
    session: Session, task_id: str, changes: list[Change], now: datetime, settings: Settings
) -> list[str]:
    """One pending delivery per webhook of the task, carrying every change: its type
    ``monitor.alert`` when any change alerts, else ``monitor.resolved``."""
    kind: MonitorEventType = (
        "monitor.alert" if any(c.kind == "monitor.alert" for c in changes) else "monitor.resolved"
    )
    payload = MonitorEvents(
        task_id=task_id, at=now, monitors=[c.event for c in changes]
    ).model_dump(mode="json")
    # stable per (webhook, task, and each monitor's notice): a check run again adds nothing
    subject = "\n".join(
        f"{c.monitor.name}\t{as_utc(c.monitor.created_at).isoformat()}\t{c.notices}"
        for c in changes
    )
    ids = []
    for webhook_id in webhooks.webhook_ids(session, task_id=task_id):
        digest = hashlib.sha256(f"{webhook_id}\nmonitors\n{task_id}\n{subject}".encode())
        event_id = f"msg_{digest.hexdigest()[:32]}"
        webhooks.add_event(
            session,
            webhook_id=webhook_id,
            event_id=event_id,
            event=kind,
            payload=payload,
            settings=settings,
        )
        ids.append(event_id)
    return ids


def _rule(session: Session, task_id: str) -> KindRule:
    return task_kinds.stored_rule(session, task_id=task_id)


def _check_task(
    session: Session,
    row: MonitorRow,
    monitor: MonitorRequest,
    task_id: str,
    rule: KindRule,
    now: datetime,
) -> Change | None:
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
        return None
    kind, again = decided
    current.notices += 1
    current.notified, current.notified_state, current.notified_at = kind, state, now
    event = MonitorEvent(
        event=kind,
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
        judge_break=_judge_break(session, task_id),
    )
    return Change(row, kind, current.notices, event)


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


def state_counts(session: Session) -> dict[str, dict[MonitorState, int]]:
    """Each monitored task with how many of its monitors hold it in each state (every state
    named, 0 for none): what /metrics serves, one series per task and state."""
    found: dict[str, dict[MonitorState, int]] = {}
    for task_id, state, count in store.state_counts(session):
        counts = found.setdefault(task_id, dict.fromkeys(MONITOR_STATES, 0))
        counts[state] = count  # type: ignore[index]
    return found
