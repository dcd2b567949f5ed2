"""Tier rows: claim a tier, store its outcome, read the outcomes back.

Every function takes the session as a keyword argument."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import get_args

from sqlalchemy import case, select
from sqlalchemy.orm import Session

from evalq.core.redact import redact_data
from evalq.core.results import FinalTierStatus, JudgeResult, TierOutcome
from evalq.core.schemas import TIERS, Tier
from evalq.store.judged import append_judged
from evalq.store.models import (
    TierResultRow,
    utcnow,
)
from evalq.store.upsert import upsert

FINAL_TIER_STATES: tuple[FinalTierStatus, ...] = get_args(FinalTierStatus)


@dataclass(frozen=True)
class TierStart:
    """What a tier task finds when it starts: how often it was delivered, whether it is done."""

    deliveries: int
    already_final: bool


def start_tier(
    session: Session, *, submission_id: str, tier: Tier, owner: str | None = None
) -> TierStart:
    """Record one more delivery of a tier task (a running row owned by ``owner``), atomically.

    A row already in a final state stays as it is (its owner too): a redelivered task that
    finished before need not run again. ``owner`` is the worker's identity
    (`evalq.workers.heartbeat`); None when the worker has none (embedded, tests).
    """
    table = TierResultRow.__table__
    upsert(
        session,
        table,  # type: ignore[arg-type]
        values={
            "submission_id": submission_id,
            "tier": tier,
            "status": "running",
            "deliveries": 1,
            "updated_at": utcnow(),
            "owner": owner,
        },
        keys=["submission_id", "tier"],
        update={
            "deliveries": table.c.deliveries + 1,
            "updated_at": utcnow(),
            "owner": case((table.c.status == "running", owner), else_=table.c.owner),
        },
    )
    row = session.get(TierResultRow, (submission_id, tier), populate_existing=True)
    assert row is not None
    return TierStart(deliveries=row.deliveries, already_final=row.status in FINAL_TIER_STATES)


def finish_tier(session: Session, *, submission_id: str, outcome: TierOutcome) -> None:
    """Store a tier's final outcome (ok / skipped / failed); idempotent.

    Configured secrets are removed from every string of it (`redact_data`) on the way in: an
    upstream error can echo a key in a message, a judge model id can carry URL credentials.
    """
    values = final_tier_values(submission_id, outcome, now=utcnow())
    upsert(
        session,
        TierResultRow.__table__,  # type: ignore[arg-type]
        values=values,
        keys=["submission_id", "tier"],
        update={k: values[k] for k in ("status", "metrics", "error", "updated_at", *JUDGE_COLUMNS)},
    )
    metrics = values["metrics"]
    if outcome.tier == "judge" and isinstance(metrics, dict) and metrics.get("identity"):
        # the score's judge, appended beside any earlier judge's (never replacing it)
        result = JudgeResult.model_validate(metrics)
        append_judged(session, submission_id=submission_id, result=result, source="tier")


def final_tier_values(
    submission_id: str, outcome: TierOutcome, *, now: datetime
) -> dict[str, object]:
    """The values of a final tier row, configured secrets removed (`redact_data`): the one
    place a `TierOutcome` becomes a row, for one tier (`finish_tier`) or a batch's skipped
    tiers (`store.intake`)."""
    metrics, error = redact_data(outcome.stored())
    judged = metrics if outcome.tier == "judge" and isinstance(metrics, dict) else {}
    return {
        "submission_id": submission_id,
        "tier": outcome.tier,
        "status": outcome.status,
        "metrics": metrics,
        "error": error,
        "deliveries": 1,
        "updated_at": now,
        **{f"judge_{name}": judged.get(name) for name in JUDGE_FIGURES},
    }


JUDGE_FIGURES = ("transport_retries", "validation_retries", "rate_limited", "cost_usd")
"""The judge tier's metrics `/metrics` sums, each also stored as a column (``judge_NAME``)."""
JUDGE_COLUMNS = tuple(f"judge_{name}" for name in JUDGE_FIGURES)


def pending_tiers(
    session: Session, *, ids: Sequence[str], live_owners: Collection[str] = ()
) -> dict[str, list[Tier]]:
    """For each of ``ids``, the tiers its next chord must run: those with no final row, less
    those running on a worker in ``live_owners`` (it is still at work on them: sending them
    again would run them twice; the merge waits for them)."""
    rows = session.execute(
        select(TierResultRow.submission_id, TierResultRow.tier, TierResultRow.owner).where(
            TierResultRow.submission_id.in_(ids),
            TierResultRow.status.in_(FINAL_TIER_STATES)
            | ((TierResultRow.status == "running") & TierResultRow.owner.in_(live_owners)),
        )
    )
    held: dict[str, set[str]] = {submission_id: set() for submission_id in ids}
    for row in rows:
        held[row.submission_id].add(row.tier)
    return {sid: [tier for tier in TIERS if tier not in held[sid]] for sid in ids}


def running_owners(session: Session, *, ids: Sequence[str]) -> set[str]:
    """The owners of the tiers of ``ids`` that are running now."""
    owners = session.scalars(
        select(TierResultRow.owner).where(
            TierResultRow.submission_id.in_(ids),
            TierResultRow.status == "running",
            TierResultRow.owner.is_not(None),
        )
    )
    return {owner for owner in owners if owner is not None}


def tier_results(session: Session, *, submission_id: str) -> dict[str, TierResultRow]:
    """The tier rows of a submission, by tier name."""
    rows = session.scalars(
        select(TierResultRow).where(TierResultRow.submission_id == submission_id)
    )
    return {row.tier: row for row in rows}


def tier_outcome(row: TierResultRow) -> TierOutcome | None:
    """A finished tier row as its typed outcome; None while it is still running."""
    if row.status == "running":
        return None
    return TierOutcome.from_stored(
        row.tier,  # type: ignore[arg-type]
        row.status,  # type: ignore[arg-type]
        row.metrics,
        row.error,
    )
