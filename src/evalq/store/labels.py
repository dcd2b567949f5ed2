"""Human labels in the store: add (all or none, replacing a labeller's earlier label) and list."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select, tuple_
from sqlalchemy.orm import Session

from evalq.core.errors import InvalidInput
from evalq.core.labels import Label, LabelRequest, unknown_run_rule
from evalq.store.models import LabelRow, SubmissionRow, utcnow
from evalq.store.webhooks import as_utc


def add_labels(session: Session, *, labels: Sequence[LabelRequest]) -> list[Label]:
    """Store validated labels: every one, or none when one names a run that is not stored.

    A label of a run its labeller labelled before replaces the earlier one (``created_at``
    kept, ``updated_at`` moved), so sending the same labels again changes nothing else.

    Raises:
        InvalidInput: ``[INDEX].submission_id`` for each label of an unknown run.
    """
    ids = {label.submission_id for label in labels}
    tasks = dict(
        session.execute(
            select(SubmissionRow.id, SubmissionRow.task_id).where(SubmissionRow.id.in_(ids))
        ).all()
    )
    unknown = [
        (f"[{index}].submission_id", unknown_run_rule(label.submission_id))
        for index, label in enumerate(labels)
        if label.submission_id not in tasks
    ]
    if unknown:
        raise InvalidInput(unknown)
    keys = [(label.submission_id, label.labeller) for label in labels]
    existing = {
        (row.submission_id, row.labeller): row
        for row in session.scalars(
            select(LabelRow).where(tuple_(LabelRow.submission_id, LabelRow.labeller).in_(keys))
        )
    }
    now = utcnow()
    rows = []
    for label in labels:
        row = existing.get((label.submission_id, label.labeller))
        if row is None:
            row = LabelRow(
                submission_id=label.submission_id,
                labeller=label.labeller,
                task_id=tasks[label.submission_id],
                created_at=now,
            )
            session.add(row)
        row.scores = {str(name): value for name, value in label.scores.items()}
        row.recommendation = label.recommendation
        row.passed = label.passed
        row.note = label.note
        row.updated_at = now
        rows.append(row)
    session.flush()
    return [label_of(row) for row in rows]


def list_labels(
    session: Session,
    *,
    task_ids: Sequence[str] | None = None,
    submission_id: str | None = None,
    labeller: str | None = None,
) -> list[Label]:
    """Stored labels, by run and then labeller; each filter given narrows the list."""
    query = select(LabelRow).order_by(LabelRow.task_id, LabelRow.submission_id, LabelRow.labeller)
    if task_ids is not None:
        query = query.where(LabelRow.task_id.in_(task_ids))
    if submission_id is not None:
        query = query.where(LabelRow.submission_id == submission_id)
    if labeller is not None:
        query = query.where(LabelRow.labeller == labeller)
    return [label_of(row) for row in session.scalars(query)]


def label_of(row: LabelRow) -> Label:
    """The stored row as readers see it."""
    return Label.model_validate(
        {
            "submission_id": row.submission_id,
            "task_id": row.task_id,
            "labeller": row.labeller,
            "scores": row.scores,
            "recommendation": row.recommendation,
            "passed": row.passed,
            "note": row.note,
            "created_at": as_utc(row.created_at),
            "updated_at": as_utc(row.updated_at),
        }
    )
