"""Monitors in the store: their definitions, each task's state, and the window a state is
computed from, read from the boards' read model (`StandingRow`: no run is scored again)."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from evalq.core.errors import NotFound
from evalq.core.metadata import as_text
from evalq.core.monitors import MonitorRequest
from evalq.scoring.kinds import KindRule
from evalq.store import standings as table
from evalq.store.models import MonitorRow, MonitorStateRow, StandingRow, SubmissionRow, utcnow
from evalq.store.upsert import upsert

S, R = SubmissionRow, StandingRow
SCAN = 2_000
"""Rows read at a time while a metadata group's window fills (the group is matched here)."""


def put_monitor(
    session: Session, *, name: str, request: MonitorRequest, created_by: str | None
) -> MonitorRow:
    """Create or replace the monitor ``name``; a replaced one keeps its tasks' states."""
    now = utcnow()
    upsert(
        session,
        MonitorRow.__table__,  # type: ignore[arg-type]
        values={
            "name": name,
            "definition": request.model_dump(mode="json"),
            "created_by": created_by,
            "created_at": now,
            "updated_at": now,
        },
        keys=["name"],
        update={"definition": request.model_dump(mode="json"), "updated_at": now},
    )
    return get_monitor(session, name=name)


def get_monitor(session: Session, *, name: str) -> MonitorRow:
    """The monitor ``name``; `NotFound` when there is none."""
    row = session.get(MonitorRow, name, populate_existing=True)
    if row is None:
        raise NotFound(f"no monitor {name!r}")
    return row


def all_monitors(session: Session) -> list[MonitorRow]:
    """Every monitor, by name (at most EVALQ_MONITOR_MAX)."""
    return list(session.scalars(select(MonitorRow).order_by(MonitorRow.name)))


def monitors_page(session: Session, *, after: str | None, limit: int) -> list[MonitorRow]:
    """At most ``limit`` monitors by name, those after ``after`` (from the first when None)."""
    query = select(MonitorRow).order_by(MonitorRow.name).limit(limit)
    if after is not None:
        query = query.where(MonitorRow.name > after)
    return list(session.scalars(query))


def state_counts(session: Session) -> list[tuple[str, str, int]]:
    """(task, state, monitors holding the task in it) for every monitored task: one row per
    task and state held, counted in the database."""
    query = (
        select(MonitorStateRow.task_id, MonitorStateRow.state, func.count())
        .group_by(MonitorStateRow.task_id, MonitorStateRow.state)
        .order_by(MonitorStateRow.task_id, MonitorStateRow.state)
    )
    return [(task_id, state, int(count)) for task_id, state, count in session.execute(query)]


def remove_monitor(session: Session, *, name: str) -> None:
    """Remove a monitor and its states; `NotFound` if unknown."""
    get_monitor(session, name=name)
    session.execute(delete(MonitorStateRow).where(MonitorStateRow.monitor == name))
    session.execute(delete(MonitorRow).where(MonitorRow.name == name))


def states(
    session: Session,
    *,
    names: Sequence[str] | None = None,
    task_ids: Collection[str] | None = None,
) -> list[MonitorStateRow]:
    """The states of ``names`` on ``task_ids`` (all when None), by monitor then task."""
    query = select(MonitorStateRow).order_by(MonitorStateRow.monitor, MonitorStateRow.task_id)
    if names is not None:
        query = query.where(MonitorStateRow.monitor.in_(names))
    if task_ids is not None:
        query = query.where(MonitorStateRow.task_id.in_(list(task_ids)))
    return list(session.scalars(query))


def states_version(session: Session, *, task_id: str | None = None) -> tuple[Any, ...]:
    """What moves when a state changes or a monitor comes or goes (a live page's ETag)."""
    query = select(func.count(), func.max(MonitorStateRow.changed_at))
    if task_id is not None:
        query = query.where(MonitorStateRow.task_id == task_id)
    return tuple(session.execute(query).one())


@dataclass(frozen=True)
class Window:
    """A monitor's window of one task: each run's ranking value and whether it passed."""

    values: list[float]
    passed: list[bool]


def window(
    session: Session, *, task_id: str, rule: KindRule, monitor: MonitorRequest, now: datetime
) -> Window:
    """The task's runs in the monitor's window, newest first: evaluated, complete (a partial
    evaluation misses inputs), neither held for review nor a copy, in the monitor's group.

    A run's value is the board's (`StandingRow`: the kind's rounded ranking value); it passed
    when its suite gate did (a suite) or its value is at least ``pass_at``.
    """
    value = table.value_of(rule)
    query = (
        select(value, R.suite_passed, S.model, S.tool, S.variant, S.payload["metadata"])
        .join(S, S.id == R.submission_id)
        .where(
            # the submissions' side names the task, so the newest runs are read off
            # ix_submissions_task_created and the read stops at the window's size
            S.task_id == task_id,
            R.problem.is_(None),
            R.partial.is_(False),
            value.is_not(None),
            S.copy_of.is_(None),
            table.not_held(),
        )
        .order_by(S.created_at.desc(), S.id.desc())
    )
    if monitor.last_hours is not None:
        query = query.where(S.created_at >= now - timedelta(hours=monitor.last_hours))
    if monitor.by in ("model", "tool", "variant"):
        query = query.where(getattr(S, monitor.by) == monitor.group)
        metadata_key = None
    else:
        metadata_key = None if monitor.by is None else monitor.by.removeprefix("metadata.")
    limit = monitor.runs
    if limit is not None and metadata_key is None:
        query = query.limit(limit)
    values: list[float] = []
    passed: list[bool] = []
    with _rows(session, query) as rows:
        for found, suite_passed, _model, _tool, _variant, metadata in rows:
            if metadata_key is not None and not _in_group(metadata, metadata_key, monitor.group):
                continue
            values.append(float(found))
            if rule.kind == "suite":
                passed.append(bool(suite_passed))
            else:
                passed.append(monitor.pass_at is not None and found >= monitor.pass_at)
            if limit is not None and len(values) >= limit:
                break
    return Window(values, passed)


@contextmanager
def _rows(session: Session, query: Any) -> Iterator[Any]:
    """The query's rows streamed, the cursor closed however the reading ends."""
    result = session.execute(query.execution_options(yield_per=SCAN))
    try:
        yield result
    finally:
        result.close()


def _in_group(metadata: Any, key: str, group: str | None) -> bool:
    return isinstance(metadata, dict) and key in metadata and as_text(metadata[key]) == group


def save_state(session: Session, row: MonitorStateRow) -> None:
    """Store a task's state under a monitor (new or changed)."""
    session.merge(row)
