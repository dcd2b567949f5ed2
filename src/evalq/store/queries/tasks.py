"""Task definitions: store one, look one up, list them with their submission counts.

Every function takes the session as a keyword argument."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from evalq.core.errors import InvalidInput, NotFound
from evalq.core.profile import profile_named
from evalq.core.schemas import STORED, Task, TaskKind, canonical_hash
from evalq.core.settings import Settings
from evalq.store import task_kinds
from evalq.store.models import (
    SubmissionRow,
    TaskRow,
    utcnow,
)
from evalq.store.upsert import upsert


def put_task(session: Session, *, task: Task, settings: Settings | None = None) -> bool:
    """Create or replace a task definition; True when anything changed.

    Raises:
        InvalidInput: on ``profile`` when ``settings`` know no profile of that name (every
            front door stores tasks through here, so each refuses alike).
    """
    profile_named(task.profile, settings)
    definition = task.model_dump(mode="json")
    digest = canonical_hash(definition)
    row = session.get(TaskRow, task.id)
    if row is not None and row.content_hash == digest:
        return False
    upsert(
        session,
        TaskRow.__table__,  # type: ignore[arg-type]
        values={
            "id": task.id,
            "definition": definition,
            "content_hash": digest,
            "updated_at": utcnow(),
            "refresh_scheduled": False,
        },
        keys=["id"],
        update={"definition": definition, "content_hash": digest, "updated_at": utcnow()},
    )
    task_kinds.settle(session, task)
    return True


def unknown_task_rule(task_id: str) -> str:
    """The rule a submission naming an undefined task breaks, as every front door words it."""
    return f"unknown task {task_id!r}; define it first"


def get_task_or_invalid(session: Session, *, task_id: str) -> Task:
    """The task a submission names; `InvalidInput` on ``task_id`` when it is not defined."""
    try:
        return get_task(session, task_id=task_id)
    except NotFound:
        raise InvalidInput([("task_id", unknown_task_rule(task_id))]) from None


def missing_tasks(session: Session, *, task_ids: Collection[str]) -> set[str]:
    """Those of ``task_ids`` that name no stored task (asked 500 at a time: SQLite's limit)."""
    wanted = sorted(set(task_ids))
    stored: set[str] = set()
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        stored.update(session.scalars(select(TaskRow.id).where(TaskRow.id.in_(chunk))))
    return set(wanted) - stored


@dataclass(frozen=True)
class TaskOverview:
    """One task as `evalq task list` shows it: its definition and its runs counted by status."""

    task: Task
    statuses: dict[str, int]
    last_activity: datetime | None
    kind: TaskKind = "arena"
    """The task's kind as stored (`evalq.store.task_kinds`): as it names it, else as its runs
    derived it when they merged."""


def task_overviews(session: Session) -> list[TaskOverview]:
    """Every task, by id, with its submissions counted by status (one grouped query) and its
    stored kind."""
    counts: dict[str, dict[str, int]] = {}
    latest: dict[str, datetime] = {}
    grouped = session.execute(
        select(
            SubmissionRow.task_id,
            SubmissionRow.status,
            func.count(),
            func.max(SubmissionRow.updated_at),
        ).group_by(SubmissionRow.task_id, SubmissionRow.status)
    )
    for task_id, status, count, updated in grouped:
        counts.setdefault(task_id, {})[status] = int(count)
        latest[task_id] = max(updated, latest.get(task_id, updated))
    found = []
    for row in session.scalars(select(TaskRow).order_by(TaskRow.id)):
        task = Task.model_validate(row.definition, context=STORED)
        found.append(
            TaskOverview(
                task=task,
                statuses=counts.get(row.id, {}),
                last_activity=latest.get(row.id),
                kind=task_kinds.kind_named(row.kind),
            )
        )
    return found


def task_submissions(
    session: Session, *, task_id: str, statuses: Collection[str] = (), limit: int = 100
) -> list[SubmissionRow]:
    """A task's submissions, most recently updated first, optionally only those ``statuses``."""
    query = select(SubmissionRow).where(SubmissionRow.task_id == task_id)
    if statuses:
        query = query.where(SubmissionRow.status.in_(statuses))
    return list(session.scalars(query.order_by(SubmissionRow.updated_at.desc()).limit(limit)))


def get_task(session: Session, *, task_id: str) -> Task:
    """The task ``task_id``; `NotFound` when there is none."""
    row = session.get(TaskRow, task_id)
    if row is None:
        raise NotFound(f"task {task_id!r} does not exist")
    return Task.model_validate(row.definition, context=STORED)
