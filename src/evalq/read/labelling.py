"""The labelling queue: the next evaluated run nobody has labelled, of one task or of all.

Runs come in a fixed order (task, then run id), so a person working down the queue and one who
skips a run (``after``: continue past it) both move forward; a run leaves the queue once anyone
labels it. Two indexed statements, whatever the store's size: the next run and how many wait.
"""

from __future__ import annotations

from pydantic import Field
from sqlalchemy import and_, exists, func, or_, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from evalq.read.reply import Reply
from evalq.store import queries
from evalq.store.models import LabelRow, SubmissionRow

LABELLED_STATUSES = ("done", "degraded")
"""Runs a person can label: evaluated, with an output to read (a failed run has no scores)."""


class NextToLabel(Reply):
    """What the labelling queue shows next (the UI's labelling page)."""

    task_id: str | None = Field(description="The task the queue is of; null: every task.")
    submission_id: str | None = Field(description="The next run to label; null: none waits.")
    run_task_id: str | None = Field(description="That run's task.")
    waiting: int = Field(description="Evaluated runs of the queue nobody has labelled yet.")
    after: str | None = Field(description="The run skipped past, when one was.")


def next_to_label(
    session: Session, *, task_id: str | None = None, after: str | None = None
) -> NextToLabel:
    """The next run of ``task_id`` (or of any task) nobody labelled, after run ``after`` in
    the queue's order when it is given (a skipped run).

    Raises:
        NotFound: ``task_id`` names no task.
    """
    if task_id is not None:
        queries.get_task(session, task_id=task_id)
    waiting = [
        SubmissionRow.status.in_(LABELLED_STATUSES),
        ~exists().where(LabelRow.submission_id == SubmissionRow.id),
    ]
    if task_id is not None:
        waiting.append(SubmissionRow.task_id == task_id)
    count = session.scalar(select(func.count()).select_from(SubmissionRow).where(*waiting)) or 0
    position: list[ColumnElement[bool]] = []
    if after:
        skipped_task = session.scalar(
            select(SubmissionRow.task_id).where(SubmissionRow.id == after)
        )
        if skipped_task is not None:
            position.append(
                or_(
                    SubmissionRow.task_id > skipped_task,
                    and_(SubmissionRow.task_id == skipped_task, SubmissionRow.id > after),
                )
            )
    found = session.execute(
        select(SubmissionRow.id, SubmissionRow.task_id)
        .where(*waiting, *position)
        .order_by(SubmissionRow.task_id, SubmissionRow.id)
        .limit(1)
    ).first()
    return NextToLabel(
        task_id=task_id,
        submission_id=None if found is None else found[0],
        run_task_id=None if found is None else found[1],
        waiting=count,
        after=after or None,
    )
