"""What the recovery sweep looks for: stuck submissions, tiers running too long, idle work.

Every function takes the session as a keyword argument."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import case, select
from sqlalchemy.orm import Session

from evalq.core.schemas import TIERS, Tier
from evalq.core.status import PENDING_STATUSES
from evalq.store.models import (
    SubmissionRow,
    TierResultRow,
    utcnow,
)
from evalq.store.queries.tiers import FINAL_TIER_STATES


def stuck_submissions(session: Session, *, older_than: timedelta, limit: int = 1000) -> list[str]:
    """Ids of submissions queued or running with no progress for longer than ``older_than``."""
    cutoff = utcnow() - older_than
    rows = session.scalars(
        select(SubmissionRow.id)
        .where(SubmissionRow.status.in_(PENDING_STATUSES), SubmissionRow.updated_at < cutoff)
        .order_by(SubmissionRow.updated_at)
        .limit(limit)
    )
    return list(rows)


@dataclass(frozen=True)
class RunningTier:
    """A tier row still running, of a submission not yet final, and the worker that claimed it."""

    submission_id: str
    tier: str
    owner: str


def running_tiers(session: Session, *, older_than: timedelta) -> list[RunningTier]:
    """Tiers claimed by a known worker more than ``older_than`` ago and still running."""
    cutoff = utcnow() - older_than
    rows = session.execute(
        select(TierResultRow.submission_id, TierResultRow.tier, TierResultRow.owner)
        .join(SubmissionRow, SubmissionRow.id == TierResultRow.submission_id)
        .where(
            TierResultRow.status == "running",
            TierResultRow.owner.is_not(None),
            TierResultRow.updated_at < cutoff,
            SubmissionRow.status.in_(PENDING_STATUSES),
        )
        .order_by(TierResultRow.updated_at)
    )
    return [RunningTier(row.submission_id, row.tier, row.owner) for row in rows]


@dataclass(frozen=True)
class IdleWork:
    """A submission not final whose rows have not changed for a while, and what it waits for."""

    submission_id: str
    attempt: int
    unfinished: tuple[Tier, ...]
    """Its tiers without a final row (running, or never started), in `TIERS` order."""
    progress: datetime
    """Its newest change: the submission row's or one of its tier rows'."""


def idle_work(session: Session, *, older_than: timedelta, limit: int = 1000) -> list[IdleWork]:
    """Submissions queued or running whose rows (its own and its tiers') are all older than
    ``older_than``; at most ``limit``, running ones first (a run dropped by a broker restart had
    usually started; a backlog waits queued), oldest first within each."""
    cutoff = utcnow() - older_than
    changed_tier = select(TierResultRow.submission_id).where(
        TierResultRow.submission_id == SubmissionRow.id, TierResultRow.updated_at >= cutoff
    )
    found = session.execute(
        select(SubmissionRow.id, SubmissionRow.enqueue_count, SubmissionRow.updated_at)
        .where(
            SubmissionRow.status.in_(PENDING_STATUSES),
            SubmissionRow.updated_at < cutoff,
            ~changed_tier.exists(),
        )
        .order_by(case((SubmissionRow.status == "running", 0), else_=1), SubmissionRow.updated_at)
        .limit(limit)
    ).all()
    if not found:
        return []
    progress = {row.id: row.updated_at for row in found}
    final: dict[str, set[str]] = {row.id: set() for row in found}
    tiers = session.execute(
        select(
            TierResultRow.submission_id,
            TierResultRow.tier,
            TierResultRow.status,
            TierResultRow.updated_at,
        ).where(TierResultRow.submission_id.in_(list(progress)))
    )
    for tier in tiers:
        progress[tier.submission_id] = max(progress[tier.submission_id], tier.updated_at)
        if tier.status in FINAL_TIER_STATES:
            final[tier.submission_id].add(tier.tier)
    return [
        IdleWork(
            submission_id=row.id,
            attempt=row.enqueue_count,
            unfinished=tuple(tier for tier in TIERS if tier not in final[row.id]),
            progress=progress[row.id],
        )
        for row in found
    ]
