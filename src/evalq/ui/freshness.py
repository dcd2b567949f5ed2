"""What a live page's ETag is made of: one small aggregate query per page, never a render.

A page polls with ``If-None-Match``; the server runs the page's query and answers 304 when the
figures have not moved, so an open page costs one indexed aggregate per poll while nothing
changes. Each figure is something an evaluation finishing moves: a submission's ``updated_at``
(every status change touches it), an evaluation's ``evaluated_at``, a tier's ``updated_at``, a
baseline's version, a review.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from evalq.store.models import BaselineRow, SubmissionRow, TaskRow, TierResultRow


def _digest(parts: Sequence[Any]) -> str:
    return hashlib.sha256(repr(tuple(parts)).encode()).hexdigest()[:20]


def _row(session: Session, query: Select[Any] | Any) -> tuple[Any, ...]:
    return tuple(session.execute(query).one())


def tasks_version(session: Session) -> str:
    """Moves when a task is put or any submission changes status."""
    runs = _row(session, select(func.count(), func.max(SubmissionRow.updated_at)))
    tasks = _row(session, select(func.count(), func.max(TaskRow.updated_at)))
    return _digest(runs + tasks)


def task_version(session: Session, *, task_id: str) -> str:
    """Moves when one of the task's submissions changes, or its baseline or definition does."""
    runs = _row(
        session,
        select(
            func.count(), func.max(SubmissionRow.updated_at), func.max(SubmissionRow.reviewed_at)
        ).where(SubmissionRow.task_id == task_id),
    )
    baseline = _row(
        session, select(func.max(BaselineRow.version)).where(BaselineRow.task_id == task_id)
    )
    task = _row(session, select(func.max(TaskRow.updated_at)).where(TaskRow.id == task_id))
    return _digest(runs + baseline + task)


def run_version(session: Session, *, submission_id: str, task_id: str) -> str:
    """Moves when the run, one of its tiers, or its task's baseline changes."""
    run = _row(
        session,
        select(
            func.count(), func.max(SubmissionRow.updated_at), func.max(SubmissionRow.review)
        ).where(SubmissionRow.id == submission_id),
    )
    tiers = _row(
        session,
        select(func.count(), func.max(TierResultRow.updated_at)).where(
            TierResultRow.submission_id == submission_id
        ),
    )
    baseline = _row(
        session, select(func.max(BaselineRow.version)).where(BaselineRow.task_id == task_id)
    )
    return _digest(run + tiers + baseline)


def review_version(session: Session) -> str:
    """Moves when a run is flagged, released or accepted."""
    flagged = _row(
        session,
        select(
            func.count(), func.max(SubmissionRow.updated_at), func.max(SubmissionRow.reviewed_at)
        ).where(SubmissionRow.review == "flagged"),
    )
    return _digest(flagged)
