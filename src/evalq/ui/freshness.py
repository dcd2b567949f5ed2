"""What a live page's ETag is made of: one small aggregate statement per page, never a render.

A page polls with ``If-None-Match``; the server runs the page's statement and answers 304 when
the figures have not moved, so an open page costs one statement per poll while nothing changes.
Each figure is something an evaluation finishing moves: a submission's ``updated_at`` (every
status change and review touches it; submissions are never deleted), a tier's ``updated_at``,
a baseline's version, a task's definition; and, for a board and a run page, which show the
judge's agreement with people, the task's labels (their number and latest change).
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import Session

from evalq.store import monitors as monitor_store
from evalq.store.models import (
    LabelRow,
    SessionRow,
    SessionTurnRow,
    SubmissionRow,
    TaskRow,
    TierResultRow,
)
from evalq.store.versions import latest_baseline, task_version, version


def tasks_version(session: Session) -> str:
    """Moves when a task is put or any submission arrives or changes (indexed maxima)."""
    return version(
        session,
        select(func.max(SubmissionRow.updated_at)).scalar_subquery(),
        select(func.max(TaskRow.updated_at)).scalar_subquery(),
        select(func.count()).select_from(TaskRow).scalar_subquery(),
    )


def labels_of(task_id: str) -> tuple[ColumnElement[Any], ...]:
    """The task's labels as version figures: how many, and the latest change (indexed)."""
    labels = select(func.count(), func.max(LabelRow.updated_at)).where(LabelRow.task_id == task_id)
    return (
        labels.with_only_columns(func.count()).scalar_subquery(),
        labels.with_only_columns(func.max(LabelRow.updated_at)).scalar_subquery(),
    )


def run_version(session: Session, *, submission_id: str, task_id: str) -> str:
    """Moves when the run, one of its tiers, its task's baseline, or its task's labels change."""
    run = select(SubmissionRow.updated_at).where(SubmissionRow.id == submission_id)
    tiers = select(func.max(TierResultRow.updated_at)).where(
        TierResultRow.submission_id == submission_id
    )
    return version(
        session,
        run.scalar_subquery(),
        tiers.scalar_subquery(),
        latest_baseline(task_id),
        *labels_of(task_id),
        *session_of_run(submission_id),
    )


def session_of_run(submission_id: str) -> tuple[ColumnElement[Any], ...]:
    """The session the run is a turn of, as version figures: its last turn and how many times
    it was evaluated (a later turn or a new evaluation moves the run's page)."""
    mine = select(SessionTurnRow.session_id).where(SessionTurnRow.submission_id == submission_id)
    found = select(SessionRow.last_turn_at, SessionRow.evaluations).where(
        SessionRow.task_id
        == select(SessionTurnRow.task_id)
        .where(SessionTurnRow.submission_id == submission_id)
        .scalar_subquery(),
        SessionRow.session_id == mine.scalar_subquery(),
    )
    return (
        found.with_only_columns(SessionRow.last_turn_at).scalar_subquery(),
        found.with_only_columns(SessionRow.evaluations).scalar_subquery(),
    )


def review_version(session: Session) -> str:
    """Moves when a run is flagged, released or accepted (each touches its ``updated_at``)."""
    flagged = select(func.count(), func.max(SubmissionRow.updated_at)).where(
        SubmissionRow.review == "flagged"
    )
    accepted = select(func.max(SubmissionRow.reviewed_at))
    return version(
        session,
        flagged.with_only_columns(func.count()).scalar_subquery(),
        flagged.with_only_columns(func.max(SubmissionRow.updated_at)).scalar_subquery(),
        accepted.scalar_subquery(),
    )


def monitors_version(session: Session, task_id: str | None = None) -> str:
    """Moves when a monitor's state changes on the task (any task when None): the beat may
    change one while no evaluation moves."""
    count, changed = monitor_store.states_version(session, task_id=task_id)
    return f"m{count}.{changed.timestamp() if changed else 0}"


LIVE_PATHS = (
    (re.compile(r"/"), "tasks"),
    (re.compile(r"/ui/review"), "review"),
    (re.compile(r"/ui/tasks/([^/]+)"), "task"),
    (re.compile(r"/ui/runs/(.+)"), "run"),
)


def version_of(session: Session, path: str) -> str | None:
    """The version of the live page at ``path`` (its query string aside); None for a path that
    is not a live page."""
    for pattern, page in LIVE_PATHS:
        found = pattern.fullmatch(path)
        if found is None:
            continue
        if page == "tasks":
            return f"{tasks_version(session)}-{monitors_version(session)}"
        if page == "review":
            return review_version(session)
        if page == "task":
            task_id = found.group(1)
            labelled = task_version(session, task_id=task_id, also=labels_of(task_id))
            return f"{labelled}-{monitors_version(session, task_id)}"
        task_id = session.scalar(
            select(SubmissionRow.task_id).where(SubmissionRow.id == found.group(1))
        )
        return run_version(session, submission_id=found.group(1), task_id=task_id or "")
    return None
