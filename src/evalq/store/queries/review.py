"""Manual review: flag a run, accept it, un-accept it, record who decided and why, list the
flagged ones.

Every function takes the session as a keyword argument."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC
from typing import Any

from sqlalchemy import ColumnElement, and_, func, or_, select, tuple_, update
from sqlalchemy.orm import Session

from evalq.core.errors import InvalidInput
from evalq.core.review_decisions import ReviewAction, ReviewDecision
from evalq.scoring.arena.run import ArenaRun
from evalq.scoring.review import RunFacts
from evalq.store.chunks import chunks
from evalq.store.models import EvaluationRow, ReviewDecisionRow, SubmissionRow, utcnow
from evalq.store.queries.submissions import get_submission_row


def flag_for_review(session: Session, *, submission_id: str) -> None:
    """Flag a submission for review, leaving it out of its task's baseline until accepted.

    Only a submission never reviewed is flagged: merging an accepted run again (merges are
    idempotent) must not undo a person's decision. An unknown id changes nothing.
    """
    session.execute(
        update(SubmissionRow)
        .where(SubmissionRow.id == submission_id, SubmissionRow.review.is_(None))
        .values(review="flagged")
    )


def accept_review(session: Session, *, submission_id: str) -> bool:
    """Accept a flagged submission: it counts towards its task's baseline again. Returns
    whether anything changed (accepting an accepted submission again changes nothing).

    Raises:
        NotFound: no such submission.
        InvalidInput: the submission is not flagged for review.
    """
    accepted = session.execute(
        update(SubmissionRow)
        .where(SubmissionRow.id == submission_id, SubmissionRow.review == "flagged")
        .values(review="accepted", reviewed_at=utcnow())
    )
    if accepted.rowcount:  # type: ignore[attr-defined]
        return True
    row = get_submission_row(session, submission_id=submission_id)
    if row.review != "accepted":
        raise InvalidInput([("review", f"submission {submission_id!r} is not flagged for review")])
    return False


def unaccept_review(session: Session, *, submission_id: str) -> bool:
    """Undo an accept: the submission is held for review again, out of its task's baseline
    until a person accepts it. Returns whether anything changed (un-accepting a held run
    changes nothing).

    Raises:
        NotFound: no such submission.
        InvalidInput: the submission was never flagged for review.
    """
    held = session.execute(
        update(SubmissionRow)
        .where(SubmissionRow.id == submission_id, SubmissionRow.review == "accepted")
        .values(review="flagged", reviewed_at=utcnow())
    )
    if held.rowcount:  # type: ignore[attr-defined]
        return True
    row = get_submission_row(session, submission_id=submission_id)
    if row.review != "flagged":
        raise InvalidInput([("review", f"submission {submission_id!r} is not accepted")])
    return False


def record_decision(
    session: Session, *, submission_id: str, action: ReviewAction, by: str, reason: str
) -> ReviewDecision:
    """Store one decision on a run's review (kept: a later decision adds a row)."""
    row = ReviewDecisionRow(
        submission_id=submission_id, action=action, decided_by=by, reason=reason
    )
    session.add(row)
    session.flush()
    return _decision(row)


def review_decisions(
    session: Session, *, submission_id: str, action: ReviewAction | None = None
) -> list[ReviewDecision]:
    """The decisions on a run's review, newest first (of one action, or all)."""
    query = select(ReviewDecisionRow).where(ReviewDecisionRow.submission_id == submission_id)
    if action is not None:
        query = query.where(ReviewDecisionRow.action == action)
    return [_decision(r) for r in session.scalars(query.order_by(ReviewDecisionRow.id.desc()))]


def _decision(row: ReviewDecisionRow) -> ReviewDecision:
    return ReviewDecision(
        action=row.action,
        by=row.decided_by,
        reason=row.reason,
        # SQLite hands back the stored UTC time without its zone
        decided_at=row.decided_at if row.decided_at.tzinfo else row.decided_at.replace(tzinfo=UTC),
    )


def flagged_submissions(
    session: Session,
    *,
    task_id: str | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> list[SubmissionRow]:
    """Submissions flagged for review and not yet accepted (of one task, or all), by id; at
    most ``limit`` of them from ``offset``."""
    query = select(SubmissionRow).where(SubmissionRow.review == "flagged")
    if task_id is not None:
        query = query.where(SubmissionRow.task_id == task_id)
    return list(session.scalars(query.order_by(SubmissionRow.id).limit(limit).offset(offset)))


def count_flagged(session: Session, *, task_id: str | None = None) -> int:
    """How many submissions are flagged for review (of one task, or all)."""
    query = select(func.count()).where(SubmissionRow.review == "flagged")
    if task_id is not None:
        query = query.where(SubmissionRow.task_id == task_id)
    return int(session.scalar(query) or 0)


def review_flags(session: Session, *, submission_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The stored review part (flags, warnings) of these submissions' evaluations, read as
    one JSON path each (the rest of the scores document is not decoded)."""
    rows = session.execute(
        select(EvaluationRow.submission_id, EvaluationRow.scores["review"]).where(
            EvaluationRow.submission_id.in_(list(submission_ids))
        )
    )
    return {sid: review or {} for sid, review in rows}


FACT_COLUMNS = (
    SubmissionRow.id,
    SubmissionRow.task_id,
    SubmissionRow.created_at,
    SubmissionRow.run_hash,
    SubmissionRow.output_hash,
    SubmissionRow.shape_hash,
    SubmissionRow.trace_seconds,
    SubmissionRow.trace_steps,
    SubmissionRow.integrity_hits,
    SubmissionRow.judged_as_written,
    SubmissionRow.total_tokens,
    SubmissionRow.tool_calls,
    SubmissionRow.iterations,
    SubmissionRow.execution_time,
    SubmissionRow.cost_usd,
    SubmissionRow.tool,
    SubmissionRow.model,
)
"""The columns `run_facts` reads (a `SubmissionRow` has them all)."""


def may_copy(evaluated: ColumnElement[bool]) -> ColumnElement[bool]:
    """The runs among ``evaluated`` that `evalq.scoring.review.duplicates` can find copies
    among: a content sent more than once, or one agent's shape (content without usage) sent more
    than once (two index-only groupings). The others are neither copies nor anyone's original,
    so the duplicates of these are the duplicates of all."""
    repeated = (
        select(SubmissionRow.run_hash)
        .where(evaluated, SubmissionRow.run_hash.is_not(None))
        .group_by(SubmissionRow.run_hash)
        .having(func.count() > 1)
    )
    agent = (SubmissionRow.shape_hash, SubmissionRow.tool, SubmissionRow.model)
    reshaped = (
        select(*agent)
        .where(evaluated, SubmissionRow.shape_hash.is_not(None))
        .group_by(*agent)
        .having(func.count() > 1)
    )
    return and_(
        evaluated,
        or_(SubmissionRow.run_hash.in_(repeated), tuple_(*agent).in_(reshaped)),
    )


def run_facts(row: Any) -> RunFacts:
    """What `evalq.scoring.review` decides from, read off a submission row (or a row of
    `FACT_COLUMNS`)."""
    return RunFacts(
        run=ArenaRun(
            submission_id=row.id,
            task_id=row.task_id,
            total_tokens=row.total_tokens,
            tool_calls=row.tool_calls,
            iterations=row.iterations,
            execution_time=row.execution_time or None,
            cost_usd=row.cost_usd or None,
            tool=row.tool,
            model=row.model,
        ),
        submitted_at=row.created_at,
        run_hash=row.run_hash,
        output_hash=row.output_hash,
        shape_hash=row.shape_hash,
        trace_seconds=row.trace_seconds,
        trace_steps=row.trace_steps,
        integrity_hits=row.integrity_hits,
        judged_as_written=row.judged_as_written,
    )


def fact_rows(session: Session, *, submission_ids: Sequence[str]) -> list[Any]:
    """The rows of `FACT_COLUMNS` (what `run_facts` reads) and ``copy_of`` of
    ``submission_ids``, in one statement per 500 ids."""
    found: list[Any] = []
    for chunk in chunks(submission_ids):
        found += session.execute(
            select(*FACT_COLUMNS, SubmissionRow.copy_of).where(SubmissionRow.id.in_(chunk))
        )
    return found
