"""The shape every tier task shares: load, compute one pure function, store, decide on retries."""

from __future__ import annotations

import random
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from celery import Task as CeleryTask
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from evalq.errors import POISON_MESSAGE, EvalqError, InvalidInput
from evalq.profiles import profile_named
from evalq.schemas import Submission, Task, Tier
from evalq.scoring.profile import Profile
from evalq.settings import get_settings
from evalq.store import queries
from evalq.store.db import session_scope


@dataclass(frozen=True)
class TierOutput:
    """What a tier computed: ``ok`` with metrics, ``skipped`` with a reason, or ``failed``."""

    status: str
    metrics: dict[str, Any] | None = None
    error: dict[str, Any] | None = field(default=None)


Compute = Callable[[Submission, Task, Profile], TierOutput]


def error_record(exc: BaseException, attempts: int) -> dict[str, Any]:
    """An exception as data: stored in the tier row, not only in the log."""
    return {
        "type": type(exc).__name__,
        "message": str(exc)[:2000],
        "attempts": attempts,
        "traceback": "".join(traceback.format_exception(exc))[-8000:],
    }


def retry_countdown(retries: int, base: int) -> float:
    """Exponential backoff with full jitter, capped at 5 minutes."""
    ceiling = min(300, base * 2**retries)
    return float(ceiling / 2 + random.uniform(0, ceiling / 2))


def is_transient_db_error(exc: BaseException) -> bool:
    """True for a store error worth retrying: the database restarted, a connection dropped."""
    return isinstance(exc, OperationalError | InterfaceError) or (
        isinstance(exc, DBAPIError) and exc.connection_invalidated
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
                countdown=retry_countdown(retries, max(1, settings.tier_retry_backoff_s)),
                max_retries=settings.tier_max_retries,
            ) from exc
        raise


def _run_tier(
    celery_task: CeleryTask, submission_id: str, tier: Tier, compute: Compute
) -> dict[str, str]:
    settings = get_settings()
    retries = int(celery_task.request.retries or 0)
    with session_scope() as session:
        start = queries.start_tier(session, submission_id=submission_id, tier=tier)
        queries.mark_running(session, submission_id=submission_id)
        if start.already_final:
            return {"submission_id": submission_id, "tier": tier, "status": "already_final"}
        if start.deliveries > settings.max_deliveries + retries:
            queries.finish_tier(
                session,
                submission_id=submission_id,
                tier=tier,
                status="failed",
                metrics=None,
                error={
                    "type": POISON_MESSAGE,
                    "message": f"delivered {start.deliveries} times; the worker was lost on "
                    f"each of the last {start.deliveries - retries - 1}",
                    "attempts": start.deliveries,
                },
            )
            return {"submission_id": submission_id, "tier": tier, "status": "failed"}
        row = queries.get_submission_row(session, submission_id=submission_id)
        submission = Submission.model_validate(row.payload)
        task = queries.get_task(session, task_id=submission.task_id)
    try:
        output = compute(submission, task, profile_named(task.profile))
    except Exception as exc:
        permanent = isinstance(exc, InvalidInput) or (
            isinstance(exc, EvalqError) and not getattr(exc, "retryable", True)
        )
        if not permanent and retries < settings.tier_max_retries:
            raise celery_task.retry(
                exc=exc, countdown=retry_countdown(retries, settings.tier_retry_backoff_s)
            ) from exc
        output = TierOutput("failed", error=error_record(exc, retries + 1))
    with session_scope() as session:
        queries.finish_tier(
            session,
            submission_id=submission_id,
            tier=tier,
            status=output.status,
            metrics=output.metrics,
            error=output.error,
        )
    return {"submission_id": submission_id, "tier": tier, "status": output.status}
