"""The chord callback (merge the tiers into an evaluation) and the debounced baseline refresh."""

from __future__ import annotations

import logging
from typing import Any

from celery import Celery, current_app, shared_task
from celery import Task as CeleryTask
from sqlalchemy.exc import DBAPIError, IntegrityError

from evalq.core.schemas import TIERS
from evalq.core.settings import get_settings
from evalq.read import served
from evalq.read.baseline import current_baseline
from evalq.service.evaluated import announce, record_evaluation
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.store.models import utcnow
from evalq.tasks.monitors import check_monitors
from evalq.workers.chords import schedule_refresh
from evalq.workers.names import MERGE_TASK, REFRESH_TASK
from evalq.workers.policy import (
    MERGE_MAX_WAITS,
    REFRESH_ATTEMPTS,
    REFRESH_MAX_RETRIES,
    TRANSIENT_DB_ERRORS,
    is_transient_db_error,
    merge_wait,
)

log = logging.getLogger(__name__)


@shared_task(bind=True, name=MERGE_TASK, max_retries=MERGE_MAX_WAITS)
def merge_tiers(self: CeleryTask, _markers: Any, submission_id: str) -> dict[str, str]:
    """Merge the stored tier results of a submission into its evaluation.

    The chord's payload is not trusted: the tier rows are read from the database. A tier row
    that is missing or still running (a duplicated header delivery can fire a chord early) makes
    the merge wait; after ``MERGE_MAX_WAITS`` it merges what is there and names what is missing.
    A transient database error (the store restarted) is retried, never lost.
    """
    try:
        return _merge(self, submission_id)
    except DBAPIError as exc:
        if is_transient_db_error(exc) and self.request.retries < MERGE_MAX_WAITS:
            raise self.retry(exc=exc, countdown=merge_wait(self.request.retries)) from exc
        raise


def _merge(self: CeleryTask, submission_id: str) -> dict[str, str]:
    settings = get_settings()
    with session_scope() as session:
        job = queries.load_job(session, submission_id=submission_id, settings=settings)
        rows = queries.tier_results(session, submission_id=submission_id)
        unfinished = [t for t in TIERS if t not in rows or rows[t].status == "running"]
        if unfinished and self.request.retries < MERGE_MAX_WAITS:
            raise self.retry(countdown=merge_wait(self.request.retries))
        tiers = {
            outcome.tier: outcome
            for outcome in map(queries.tier_outcome, rows.values())
            if outcome is not None
        }
        current = current_baseline(session, task_id=job.task.id, profile=job.profile)
        recorded = record_evaluation(session, job, tiers, current, settings=settings)
    # Committed: the events stored with it are sent (never waited for), and the refresh.
    announce(current_app, [recorded], settings)
    return {"submission_id": submission_id, "status": recorded.status}


@shared_task(
    name=REFRESH_TASK,
    autoretry_for=TRANSIENT_DB_ERRORS,  # the store restarted: try again
    retry_backoff=True,
    max_retries=REFRESH_MAX_RETRIES,
)
def refresh_baseline(task_id: str, spaced: bool = False) -> int | None:
    """Recompute a task's Arena baseline from its evaluated submissions; store a new version.

    The baseline's figures are order statistics read in the database (`sql_baseline`), so a
    refresh costs a few indexed queries however many submissions the task has.

    At most one refresh per task is scheduled at a time (`queries.claim_refresh`), so its cost is
    shared by every merge that happened during the debounce interval. Two can still overlap (a
    merge schedules the next as soon as this one starts; an operator can run one by hand): both
    then ask for the same version number, the database's unique key rejects the second, and it
    computes again from what it reads then, so the newest version is never older than either.
    The task's monitors are checked once the new version is stored (`check_monitors`): the
    debounce that spares the baseline a refresh per merge spares the monitors a check per merge.

    ``spaced``: scheduled (by a merge, or the ticket sweep), not asked for. Such a refresh of a
    task whose last refresh took d seconds starts no sooner than d (1 / share - 1) after it
    ended (EVALQ_BASELINE_REFRESH_SHARE, 1/4: three times d): it sends itself again for then and
    returns None, its claim kept, so the merges meanwhile schedule nothing more. The refreshes
    of a large task that keeps receiving runs then take at most that share of a worker instead
    of running back to back; a small task's (milliseconds) are spaced by the debounce alone.
    """
    if spaced and _sent_for_later(task_id):
        return None
    with session_scope() as session:
        queries.release_refresh(session, task_id=task_id)
    attempt = 1
    while True:
        try:
            version = _store_baseline(task_id)
            # the task's runs are merged and its standings current: its monitors are due
            check_monitors([task_id])
            return version
        except IntegrityError:
            # A concurrent refresh of the task stored this version first (the refresh a merge
            # scheduled while this one ran, or one started by hand): read the state again.
            if attempt == REFRESH_ATTEMPTS:
                raise
            attempt += 1


def resend_refreshes(app: Celery) -> list[str]:
    """In-process only, at start: send again the refresh of every task whose claim an earlier
    process left set (with no broker, its message, waiting out the debounce or the spacing,
    died with that process, and the claim would keep every later merge from scheduling one);
    the tasks."""
    with session_scope() as session:
        claimed = queries.claimed_refreshes(session)
    for task_id in claimed:
        schedule_refresh(app, task_id)
    return claimed


def _sent_for_later(task_id: str) -> bool:
    """Whether the task's refreshes have had their share of the time: this one is then sent
    again for when they have not (False, and it runs now, when the broker does not take it)."""
    settings = get_settings()
    with session_scope() as session:
        wait = queries.refresh_wait_s(
            session, task_id=task_id, share=settings.baseline_refresh_share, now=utcnow()
        )
    if wait <= 0:
        return False
    try:
        schedule_refresh(current_app, task_id, countdown=wait)
    except Exception as error:  # the broker is down: run now rather than lose the refresh
        log.warning("could not space the refresh of %s: %s", task_id, type(error).__name__)
        return False
    return True


def _store_baseline(task_id: str) -> int:
    """Compute the task's baseline (order statistics read in the database); store it as a new
    version unless it equals the newest; rescore the standings and the board figures."""
    with session_scope() as session:
        return served.refresh_task(session, task_id=task_id, settings=get_settings())
