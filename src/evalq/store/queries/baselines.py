"""Baseline snapshots: the current one, a new version, the refresh claim and its spacing.

Every function takes the session as a keyword argument."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from evalq.store.models import (
    BaselineRow,
    TaskRefreshRow,
    TaskRow,
)


def current_baseline(session: Session, *, task_id: str) -> BaselineRow | None:
    """The newest baseline snapshot of a task, if any was computed."""
    return session.scalars(
        select(BaselineRow)
        .where(BaselineRow.task_id == task_id)
        .order_by(BaselineRow.version.desc())
        .limit(1)
    ).first()


def current_baselines(session: Session, *, task_ids: Sequence[str]) -> dict[str, BaselineRow]:
    """`current_baseline` of many tasks, ``{task id: newest snapshot}`` (a task without one is
    not a key), in one statement per 500 tasks."""
    found: dict[str, BaselineRow] = {}
    for start in range(0, len(task_ids), 500):
        chunk = task_ids[start : start + 500]
        newest = (
            select(BaselineRow.task_id, func.max(BaselineRow.version).label("version"))
            .where(BaselineRow.task_id.in_(chunk))
            .group_by(BaselineRow.task_id)
            .subquery()
        )
        rows = session.scalars(
            select(BaselineRow).join(
                newest,
                (BaselineRow.task_id == newest.c.task_id)
                & (BaselineRow.version == newest.c.version),
            )
        )
        found.update({row.task_id: row for row in rows})
    return found


def add_baseline(
    session: Session, *, task_id: str, data: dict[str, Any], submission_count: int
) -> int:
    """Store a new baseline version (previous + 1) and return it."""
    latest = session.scalar(
        select(func.max(BaselineRow.version)).where(BaselineRow.task_id == task_id)
    )
    version = (latest or 0) + 1
    session.add(
        BaselineRow(task_id=task_id, version=version, data=data, submission_count=submission_count)
    )
    session.flush()
    return version


def claim_refresh(session: Session, *, task_id: str) -> bool:
    """Mark a baseline refresh of the task as scheduled; False when one already is (debounce)."""
    result = session.execute(
        update(TaskRow)
        .where(TaskRow.id == task_id, TaskRow.refresh_scheduled.is_(False))
        .values(refresh_scheduled=True)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


def release_refresh(session: Session, *, task_id: str) -> None:
    """Allow the next refresh of the task to be scheduled (called as a refresh starts)."""
    session.execute(update(TaskRow).where(TaskRow.id == task_id).values(refresh_scheduled=False))


def claimed_refreshes(session: Session) -> list[str]:
    """The tasks whose refresh is scheduled (claimed and not yet started), by id."""
    return list(
        session.scalars(select(TaskRow.id).where(TaskRow.refresh_scheduled).order_by(TaskRow.id))
    )


def refresh_row(session: Session, *, task_id: str) -> TaskRefreshRow:
    """The task's `TaskRefreshRow`, added empty when it has none (in the caller's transaction,
    the refresh's: no other writes it)."""
    row = session.get(TaskRefreshRow, task_id)
    if row is None:
        row = TaskRefreshRow(task_id=task_id)
        session.add(row)
    return row


def note_refresh(session: Session, *, task_id: str, cost_s: float, ended_at: datetime) -> None:
    """Keep how long the task's refresh took and when it ended (its own transaction's last
    write)."""
    row = refresh_row(session, task_id=task_id)
    row.cost_s, row.ended_at = cost_s, ended_at


def refresh_wait_s(session: Session, *, task_id: str, share: float, now: datetime) -> float:
    """How long a scheduled refresh of the task waits so that its refreshes take at most
    ``share`` of the time: after one that took d seconds the next starts d (1 / share - 1)
    after it ended (0 when none is kept, or that time has passed)."""
    row = session.get(TaskRefreshRow, task_id)
    if row is None or row.cost_s is None or row.ended_at is None:
        return 0.0
    ended = row.ended_at if row.ended_at.tzinfo else row.ended_at.replace(tzinfo=now.tzinfo)
    due = ended + timedelta(seconds=row.cost_s * (1 / share - 1))
    return max(0.0, (due - now).total_seconds())
