"""Versions of what a read shows: a digest of a few indexed aggregates, read in one statement.

Each figure is something an evaluation finishing moves: a submission's ``updated_at`` (every
status change, review and copy mark touches it; submissions are never deleted), a tier's
``updated_at``, a baseline's version, a task's definition. The UI's live pages answer 304 while
their version holds (`evalq.ui.freshness`); a board's stored figures are reused while theirs
does (`evalq.store.standings`).
"""

from __future__ import annotations

import hashlib
from typing import Any

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import Session

from evalq.store.models import BaselineRow, SubmissionRow, TaskRow


def version(session: Session, *figures: ColumnElement[Any]) -> str:
    """A digest of ``figures``, each a scalar subquery, read in one statement."""
    row = tuple(session.execute(select(*figures)).one())
    return hashlib.sha256(repr(row).encode()).hexdigest()[:20]


def latest_baseline(task_id: str) -> ColumnElement[Any]:
    return (
        select(func.max(BaselineRow.version))
        .where(BaselineRow.task_id == task_id)
        .scalar_subquery()
    )


def task_version(
    session: Session, *, task_id: str, also: tuple[ColumnElement[Any], ...] = ()
) -> str:
    """Moves when one of the task's submissions changes, or its baseline or definition does
    (or one of ``also``: more figures a page of the task shows, read in the same statement)."""
    runs = select(func.max(SubmissionRow.updated_at)).where(SubmissionRow.task_id == task_id)
    task = select(TaskRow.updated_at).where(TaskRow.id == task_id)
    return version(
        session, runs.scalar_subquery(), task.scalar_subquery(), latest_baseline(task_id), *also
    )
