"""Submission rows: store one, load a tier's job, enqueue bookkeeping and statuses.

Every function takes the session as a keyword argument."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from evalq.core.errors import Conflict, NotFound
from evalq.core.profile import Profile, profile_named
from evalq.core.provenance import trace_provenance
from evalq.core.redact import redact_data
from evalq.core.results import PriceSource
from evalq.core.schemas import (
    STORED,
    Submission,
    Task,
    run_digests,
    shape_digest,
    trace_bounds,
)
from evalq.core.settings import Settings
from evalq.core.status import PENDING_STATUSES, Status
from evalq.store.models import (
    SubmissionRow,
    TaskRow,
    TierResultRow,
    utcnow,
)
from evalq.store.queries.tasks import get_task_or_invalid


def add_submission(
    session: Session,
    *,
    submission: Submission,
    cost_usd: float | None,
    priced_by: PriceSource | None = None,
) -> bool:
    """Store a new submission as queued; True when created, False when it already existed.

    ``cost_usd`` is its price at submit and ``priced_by`` where that price came from (the
    merge reads it back rather than pricing the run again).

    Raises:
        InvalidInput: the task does not exist.
        Conflict: the id exists with different content.
    """
    digest = submission.content_hash()
    existing = session.get(SubmissionRow, submission.id)
    if existing is not None:
        if existing.content_hash != digest:
            raise Conflict(
                f"submission {submission.id!r} exists with different content; "
                "submission ids are idempotency keys, use a new id for a new run"
            )
        return False
    task = get_task_or_invalid(session, task_id=submission.task_id)
    # the graph package loads networkx: paid by intake, not by every read of the store
    from evalq.metrics.graph.integrity import submission_integrity

    hits = submission_integrity(submission, task)
    usage = submission.usage
    payload = submission.model_dump(mode="json")
    run_hash, output_hash = run_digests(payload)
    trace_seconds, trace_steps = trace_bounds(payload)
    session.add(
        SubmissionRow(
            id=submission.id,
            task_id=submission.task_id,
            content_hash=digest,
            payload=payload,
            run_hash=run_hash,
            output_hash=output_hash,
            shape_hash=shape_digest(payload),
            trace_seconds=trace_seconds,
            trace_steps=trace_steps,
            trace_provenance=trace_provenance(
                timed=trace_seconds is not None, sent_by=None, trusted=()
            ),
            integrity_hits=len(hits) or None,
            integrity=[h.model_dump(mode="json") for h in hits] or None,
            status="queued",
            tool=submission.tool,
            model=submission.model,
            variant=submission.variant,
            run_index=submission.run_index,
            planned_runs=submission.planned_runs,
            total_tokens=usage.tokens,
            tool_calls=usage.tool_calls,
            iterations=usage.iterations,
            execution_time=usage.execution_time,
            cost_usd=cost_usd,
            priced_by=None if priced_by is None else priced_by.model_dump(mode="json"),
        )
    )
    session.flush()
    return True


def get_submission_row(session: Session, *, submission_id: str) -> SubmissionRow:
    """The stored submission row; `NotFound` when there is none."""
    row = session.get(SubmissionRow, submission_id)
    if row is None:
        raise NotFound(f"submission {submission_id!r} does not exist")
    return row


@dataclass(frozen=True)
class Job:
    """A stored submission with everything scoring it needs, loaded once per task run.

    Attributes:
        submission: the validated submission.
        task: the task it ran.
        profile: the scoring profile the task selects.
        cost_usd: the run's cost as priced once at submit (None when unknown).
        priced_by: where that price came from, as stored at submit; None without a cost, and
            for a row stored before evalq recorded it (migration 0007).
    """

    submission: Submission
    task: Task
    profile: Profile
    cost_usd: float | None
    priced_by: PriceSource | None = None


def load_job(session: Session, *, submission_id: str, settings: Settings | None = None) -> Job:
    """The submission, its task and its profile, read in one query.

    Raises:
        NotFound: no such submission.
        InvalidInput: its task names a profile these settings do not know.
    """
    found = session.execute(
        select(SubmissionRow, TaskRow)
        .join(TaskRow, TaskRow.id == SubmissionRow.task_id)
        .where(SubmissionRow.id == submission_id)
    ).first()
    if found is None:
        raise NotFound(f"submission {submission_id!r} does not exist")
    row, task_row = found
    task = Task.model_validate(task_row.definition, context=STORED)
    return Job(
        submission=Submission.model_validate(row.payload, context=STORED),
        task=task,
        profile=profile_named(task.profile, settings),
        cost_usd=row.cost_usd,
        priced_by=None if row.priced_by is None else PriceSource.model_validate(row.priced_by),
    )


def begin_enqueue(
    session: Session, *, submission_id: str, live_owners: Collection[str] = ()
) -> int:
    """Count one more enqueue of a submission and return its attempt number (1, 2, ...).

    Its running tiers lose their owner, unless the owner is in ``live_owners`` (a live worker is
    still at work on them, and they are not sent again): the others wait for the new attempt
    now, so a sweep must not take them for a dead worker's work again before a worker claims
    them.
    """
    row = get_submission_row(session, submission_id=submission_id)
    row.enqueue_count += 1
    row.status = "queued"
    row.updated_at = utcnow()
    session.execute(
        update(TierResultRow)
        .where(
            TierResultRow.submission_id == submission_id,
            TierResultRow.status == "running",
            TierResultRow.owner.is_(None) | TierResultRow.owner.not_in(live_owners),
        )
        .values(owner=None)
    )
    session.flush()
    return row.enqueue_count


def release_unsent(session: Session, *, ids: Sequence[str]) -> None:
    """Undo the first-enqueue claim of submissions whose publish failed; a re-send retries it."""
    session.execute(
        update(SubmissionRow)
        .where(
            SubmissionRow.id.in_(ids),
            SubmissionRow.status == "queued",
            SubmissionRow.enqueue_count == 1,
        )
        .values(enqueue_count=0)
    )


def set_status(
    session: Session, *, submission_id: str, status: Status, error: dict[str, Any] | None = None
) -> None:
    """Set a submission's lifecycle status (and error as data, configured secrets removed)."""
    session.execute(
        update(SubmissionRow)
        .where(SubmissionRow.id == submission_id)
        .values(status=status, error=redact_data(error), updated_at=utcnow())
    )


def set_statuses(session: Session, *, status: Status, ids: Sequence[str]) -> None:
    """`set_status` of many submissions to one ``status``, without an error (one UPDATE per
    500 ids)."""
    now = utcnow()
    for first in range(0, len(ids), 500):
        session.execute(
            update(SubmissionRow)
            .where(SubmissionRow.id.in_(list(ids[first : first + 500])))
            .values(status=status, error=None, updated_at=now)
            .execution_options(synchronize_session=False)
        )


def set_judged_as_written(session: Session, *, counts: Mapping[str, int]) -> None:
    """Store each run's count of sentences tier 1 marked that the judge scored without leaving
    out (`evalq.scoring.injection.judged_as_written`; 0 stored as NULL), where it changed: one
    UPDATE per run that has one, one per 500 runs that may have had one."""
    for sid, count in counts.items():
        if count:
            session.execute(
                update(SubmissionRow)
                .where(SubmissionRow.id == sid)
                .values(judged_as_written=count)
                .execution_options(synchronize_session=False)
            )
    clear = [sid for sid, count in counts.items() if not count]
    for first in range(0, len(clear), 500):
        session.execute(
            update(SubmissionRow)
            .where(
                SubmissionRow.id.in_(clear[first : first + 500]),
                SubmissionRow.judged_as_written.is_not(None),
            )
            .values(judged_as_written=None)
            .execution_options(synchronize_session=False)
        )


def mark_running(session: Session, *, submission_id: str) -> None:
    """queued -> running; a finished submission keeps its status."""
    session.execute(
        update(SubmissionRow)
        .where(SubmissionRow.id == submission_id, SubmissionRow.status == "queued")
        .values(status="running", updated_at=utcnow())
    )


def current_attempts(session: Session, *, ids: Sequence[str]) -> dict[str, int]:
    """The enqueue attempt of each of ``ids`` that exists and is not final yet."""
    rows = session.execute(
        select(SubmissionRow.id, SubmissionRow.enqueue_count).where(
            SubmissionRow.id.in_(ids), SubmissionRow.status.in_(PENDING_STATUSES)
        )
    )
    return {row.id: row.enqueue_count for row in rows}


def metadata_of(session: Session, *, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The metadata of each submission among ``ids`` that has some (asked 500 at a time)."""
    found: dict[str, dict[str, Any]] = {}
    for start in range(0, len(ids), 500):
        rows = session.execute(
            select(SubmissionRow.id, SubmissionRow.payload["metadata"].label("metadata")).where(
                SubmissionRow.id.in_(ids[start : start + 500])
            )
        )
        found |= {row.id: row.metadata for row in rows if isinstance(row.metadata, dict)}
    return found


def status_counts(session: Session, *, ids: Sequence[str]) -> dict[str, str]:
    """Status of each submission id among ``ids`` that exists."""
    rows = session.execute(
        select(SubmissionRow.id, SubmissionRow.status).where(SubmissionRow.id.in_(ids))
    )
    return {row.id: row.status for row in rows}
