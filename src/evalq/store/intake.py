"""Storing a batch of submissions in a fixed number of statements, whatever its size.

A batch is read with one query per kind of row it depends on (its tasks, the ids it reuses),
checked in Python, and written with one multi-row INSERT per table: a POST of 100 submissions
costs about what a POST of one does (it issued ~9 statements per submission before). The
checks are those `queries.add_submission` makes one row at a time, in the batch's order, so the
first bad item raises the same error; nothing is written until every item has passed.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, insert, select, update
from sqlalchemy.orm import Session

from evalq.core.errors import Conflict, InvalidInput
from evalq.core.integrity import IntegrityHit
from evalq.core.provenance import trace_provenance
from evalq.core.results import PriceSource, TierOutcome
from evalq.core.schemas import (
    STORED,
    Submission,
    Task,
    run_digests,
    shape_digest,
    trace_bounds,
)
from evalq.store.chunks import chunks
from evalq.store.models import SubmissionRow, TaskRow, TierResultRow, utcnow
from evalq.store.queries import final_tier_values, unknown_task_rule

# The tables, not the ORM classes: a Core INSERT of many rows skips the ORM's per-row work.
SUBMISSIONS = cast(Table, SubmissionRow.__table__)
TIER_RESULTS = cast(Table, TierResultRow.__table__)


@dataclass(frozen=True)
class Known:
    """A stored submission as a batch reusing its id needs it."""

    content_hash: str
    status: str
    enqueue_count: int


@dataclass(frozen=True)
class NewSubmission:
    """A submission to insert: its content, its price (dollars and the price's source), the
    tiers stored as skipped and those computed where it was submitted (``computed``); and, for
    its trace's provenance (`evalq.core.provenance`), the API key whose spans the OTLP intake
    assembled it from (``sent_by``, None for a body submitted as it is) and the keys its task
    trusts (``trusted_keys``)."""

    submission: Submission
    content_hash: str
    cost_usd: float | None
    skipped: list[TierOutcome]
    priced_by: PriceSource | None = None
    computed: tuple[TierOutcome, ...] = ()
    integrity: tuple[IntegrityHit, ...] = ()
    sent_by: str | None = None
    trusted_keys: tuple[str, ...] = ()


def _chunks(values: Collection[str]) -> Iterator[list[str]]:
    yield from chunks(sorted(set(values)))


def tasks_named(session: Session, *, task_ids: Collection[str]) -> dict[str, Task]:
    """The stored tasks among ``task_ids``, by id (one query per `evalq.store.chunks` chunk)."""
    tasks: dict[str, Task] = {}
    for chunk in _chunks(task_ids):
        for row in session.scalars(select(TaskRow).where(TaskRow.id.in_(chunk))):
            tasks[row.id] = Task.model_validate(row.definition, context=STORED)
    return tasks


def known_submissions(session: Session, *, ids: Collection[str]) -> dict[str, Known]:
    """The stored submissions among ``ids``, by id (one query per `evalq.store.chunks` chunk)."""
    known: dict[str, Known] = {}
    for chunk in _chunks(ids):
        rows = session.execute(
            select(
                SubmissionRow.id,
                SubmissionRow.content_hash,
                SubmissionRow.status,
                SubmissionRow.enqueue_count,
            ).where(SubmissionRow.id.in_(chunk))
        )
        for row in rows:
            known[row.id] = Known(row.content_hash, row.status, row.enqueue_count)
    return known


def new_in_batch(
    submissions: Sequence[Submission],
    hashes: Sequence[str],
    *,
    tasks: Collection[str],
    known: dict[str, Known],
) -> list[bool]:
    """Which items of a batch are new, in its order; an id repeated in it is new once.

    Raises:
        InvalidInput: on ``task_id``, for the first item naming a task not in ``tasks``.
        Conflict: for the first id stored (or earlier in the batch) with different content.
    """
    seen = {sid: stored.content_hash for sid, stored in known.items()}
    new: list[bool] = []
    for submission, digest in zip(submissions, hashes, strict=True):
        if submission.task_id not in tasks:
            raise InvalidInput([("task_id", unknown_task_rule(submission.task_id))])
        previous = seen.get(submission.id)
        if previous is not None and previous != digest:
            raise Conflict(
                f"submission {submission.id!r} exists with different content; "
                "submission ids are idempotency keys, use a new id for a new run"
            )
        new.append(previous is None)
        seen[submission.id] = digest
    return new


def insert_new(session: Session, *, runs: Sequence[NewSubmission]) -> None:
    """Insert ``runs`` as queued and claimed for their first enqueue (``enqueue_count`` 1),
    with their skipped and computed tiers: two multi-row INSERTs, whatever the number of runs.

    A run whose publish then fails is released by `queries.release_unsent`, as before.
    """
    if not runs:
        return
    now = utcnow()
    session.execute(insert(SUBMISSIONS), [_submission_values(run, now) for run in runs])
    tiers = [
        (run.submission.id, outcome) for run in runs for outcome in (*run.skipped, *run.computed)
    ]
    if tiers:
        rows = [final_tier_values(sid, outcome, now=now) for sid, outcome in tiers]
        session.execute(insert(TIER_RESULTS), rows)


def claim_unsent(session: Session, *, ids: Collection[str]) -> list[str]:
    """Claim the first enqueue of those of ``ids`` stored but never sent to the broker.

    A submit whose publish failed (the broker was down) leaves its submissions ``queued`` with
    ``enqueue_count == 0``; re-sending them claims that enqueue here and publishes attempt 1
    again, with the same chord ids. One conditional UPDATE per chunk of ids: of two concurrent
    re-sends, each id is claimed by one.
    """
    claimed: list[str] = []
    for chunk in _chunks(ids):
        won = session.execute(
            update(SubmissionRow)
            .where(
                SubmissionRow.id.in_(chunk),
                SubmissionRow.status == "queued",
                SubmissionRow.enqueue_count == 0,
            )
            .values(enqueue_count=1, updated_at=utcnow())
            .returning(SubmissionRow.id)
            .execution_options(synchronize_session=False)
        )
        claimed += won.scalars()
    return claimed


def _submission_values(run: NewSubmission, now: datetime) -> dict[str, Any]:
    """The row of one new submission, queued and claimed for its first enqueue."""
    submission = run.submission
    payload = submission.model_dump(mode="json")
    run_hash, output_hash = run_digests(payload)
    usage = submission.usage
    trace_seconds, trace_steps = trace_bounds(payload)
    return {
        "id": submission.id,
        "task_id": submission.task_id,
        "content_hash": run.content_hash,
        "payload": payload,
        "status": "queued",
        "error": None,
        "enqueue_count": 1,
        "created_at": now,
        "updated_at": now,
        "tool": submission.tool,
        "model": submission.model,
        "variant": submission.variant,
        "run_index": submission.run_index,
        "planned_runs": submission.planned_runs,
        "total_tokens": usage.tokens,
        "tool_calls": usage.tool_calls,
        "iterations": usage.iterations,
        "execution_time": usage.execution_time,
        "cost_usd": run.cost_usd,
        "priced_by": None if run.priced_by is None else run.priced_by.model_dump(mode="json"),
        "run_hash": run_hash,
        "output_hash": output_hash,
        "shape_hash": shape_digest(payload),
        "trace_seconds": trace_seconds,
        "trace_steps": trace_steps,
        "trace_provenance": trace_provenance(
            timed=trace_seconds is not None, sent_by=run.sent_by, trusted=run.trusted_keys
        ),
        "integrity_hits": len(run.integrity) or None,
        "integrity": [h.model_dump(mode="json") for h in run.integrity] or None,
        "review": None,
        "reviewed_at": None,
    }
