"""The shape every tier task shares: load, compute one pure function, store, decide on retries."""

from __future__ import annotations

import traceback
from collections.abc import Callable

from celery import Task as CeleryTask
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from evalq.core.errors import InvalidInput
from evalq.core.redact import redact
from evalq.core.results import WORKER_LOST, ErrorKind, ErrorRecord, TierOutcome
from evalq.core.schemas import Tier
from evalq.core.settings import get_settings
from evalq.store import queries
from evalq.store.db import session_for
from evalq.store.queries import Job
from evalq.workers.heartbeat import current_owner
from evalq.workers.policy import db_retry_countdown, is_transient_db_error, retry_countdown

Compute = Callable[[Job], TierOutcome]
"""A tier's pure computation: the loaded job in, its outcome out."""

TRACEBACK_CHARS = 8000
MESSAGE_CHARS = 2000


def error_record(exc: BaseException, attempts: int, tier: Tier) -> ErrorRecord:
    """An exception as data: stored in the tier row, not only in the log.

    Configured secrets are removed (`redact`) before the message and traceback are cut, so a
    cut never leaves part of one behind.
    """
    kind: ErrorKind = "invalid_input" if isinstance(exc, InvalidInput) else "internal"
    return ErrorRecord(
        type=type(exc).__name__,
        message=redact(str(exc))[:MESSAGE_CHARS],
        attempts=attempts,
        kind=kind,
        tier=tier,
        traceback=redact("".join(traceback.format_exception(exc)))[-TRACEBACK_CHARS:],
    )


def run_tier(
    celery_task: CeleryTask, submission_id: str, tier: Tier, compute: Compute
) -> dict[str, str]:
    """Run one tier for one submission, idempotently, and return a small marker for the chord.

    The outcome is stored in TierResult(submission_id, tier). A task redelivered after it
    finished does nothing; one delivered more than ``max_deliveries`` times beyond its own retries
    (its worker kept dying) is recorded as failed instead of running again. After its retries a
    failure is recorded as data and the task returns normally, so the chord always completes.

    A transient database error (`is_transient_db_error`) is retried with the same backoff; it
    cannot be recorded as data (the store is what failed), so once the retries are spent it
    propagates and the recovery sweep re-enqueues the submission.
    """
    try:
        return _run_tier(celery_task, submission_id, tier, compute)
    except DBAPIError as exc:
        retries = int(celery_task.request.retries or 0)
        settings = get_settings()
        if is_transient_db_error(exc) and retries < settings.tier_max_retries:
            raise celery_task.retry(
                exc=exc,
                countdown=db_retry_countdown(retries, settings),
                max_retries=settings.tier_max_retries,
            ) from exc
        raise


def _run_tier(
    celery_task: CeleryTask, submission_id: str, tier: Tier, compute: Compute
) -> dict[str, str]:
    with session_for() as session:  # one session, two transactions: claim, then store
        return _run_tier_in(session, celery_task, submission_id, tier, compute)


def _run_tier_in(
    session: Session,
    celery_task: CeleryTask,
    submission_id: str,
    tier: Tier,
    compute: Compute,
) -> dict[str, str]:
    settings = get_settings()
    retries = int(celery_task.request.retries or 0)
    with session.begin():
        start = queries.start_tier(
            session, submission_id=submission_id, tier=tier, owner=current_owner()
        )
        queries.mark_running(session, submission_id=submission_id)
        if start.already_final:
            return {"submission_id": submission_id, "tier": tier, "status": "already_final"}
        if start.deliveries > settings.max_deliveries + retries:
            lost = TierOutcome(
                tier=tier,
                status="failed",
                error=ErrorRecord(
                    type=WORKER_LOST,
                    message=f"delivered {start.deliveries} times; the worker was lost on "
                    f"each of the last {start.deliveries - retries - 1}",
                    attempts=start.deliveries,
                    kind="worker_lost",
                    tier=tier,
                ),
            )
            queries.finish_tier(session, submission_id=submission_id, outcome=lost)
            return {"submission_id": submission_id, "tier": tier, "status": "failed"}
        job = queries.load_job(session, submission_id=submission_id, settings=settings)
    try:
        outcome = compute(job)
    except Exception as exc:
        permanent = isinstance(exc, InvalidInput)
        if not permanent and retries < settings.tier_max_retries:
            raise celery_task.retry(
                exc=exc, countdown=retry_countdown(retries, settings.tier_retry_backoff_s)
            ) from exc
        outcome = TierOutcome(
            tier=tier, status="failed", error=error_record(exc, retries + 1, tier)
        )
    with session.begin():
        queries.finish_tier(session, submission_id=submission_id, outcome=outcome)
    return {"submission_id": submission_id, "tier": tier, "status": outcome.status}
