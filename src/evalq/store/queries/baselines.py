"""Baseline snapshots: the current one, a new version, the refresh claim.

Every function takes the session as a keyword argument."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from evalq.store.models import (
    BaselineRow,
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
