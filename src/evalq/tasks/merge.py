"""The chord callback (merge the tiers into an evaluation) and the debounced baseline refresh."""

from __future__ import annotations

from typing import Any

from celery import Task as CeleryTask
from celery import current_app, shared_task
from sqlalchemy.exc import DBAPIError, IntegrityError, InterfaceError, OperationalError

from evalq.profiles import profile_named
from evalq.schemas import TIERS, Submission
from evalq.scoring.arena import Baseline, compute_baseline
from evalq.scoring.evaluation import TierView, evaluate_submission
from evalq.settings import get_settings
from evalq.store import queries
from evalq.store.baseline_sql import sql_baseline
from evalq.store.db import session_scope
from evalq.tasks.tier import is_transient_db_error
from evalq.workers.app import MERGE_TASK, REFRESH_TASK

REFRESH_ATTEMPTS = 5
"""How often a refresh that lost a race for its version number to another refresh reads again."""

MERGE_MAX_WAITS = 40
"""How often a merge that found tiers unfinished waits for them before degrading."""


def merge_wait(waits: int) -> float:
    """Seconds to wait before re-checking unfinished tiers (1, 2, 4 ... capped at 30)."""
    return float(min(30, 2**waits))


def baseline_of(session: Any, task_id: str, profile_name: str) -> tuple[Baseline, int]:
    """The task's current baseline snapshot and its version (0 = the profile's defaults)."""
    row = queries.current_baseline(session, task_id=task_id)
    if row is None:
        return compute_baseline([], profile_named(profile_name).arena), 0
    return Baseline.from_dict(row.data), row.version


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
    with session_scope() as session:
        row = queries.get_submission_row(session, submission_id=submission_id)
        submission = Submission.model_validate(row.payload)
        task = queries.get_task(session, task_id=submission.task_id)
        rows = queries.tier_results(session, submission_id=submission_id)
        unfinished = [t for t in TIERS if t not in rows or rows[t].status == "running"]
        if unfinished and self.request.retries < MERGE_MAX_WAITS:
            raise self.retry(countdown=merge_wait(self.request.retries))
        tiers = {
            tier: TierView(status=r.status, metrics=r.metrics or {}, error=r.error)
            for tier, r in rows.items()
            if r.status != "running"
        }
        profile = profile_named(task.profile)
        baseline, version = baseline_of(session, task.id, task.profile)
        result = evaluate_submission(submission, task, tiers, baseline, profile)
        queries.save_evaluation(
            session,
            submission_id=submission_id,
            task_id=task.id,
            status=result.status,
            scores=result.scores,
            missing_tiers=result.missing,
            baseline_version=version,
            profile_hash=profile.hash,
        )
        queries.set_status(
            session, submission_id=submission_id, status=result.status, error=result.error
        )
        schedule = queries.claim_refresh(session, task_id=task.id)
    if schedule:
        current_app.send_task(
            REFRESH_TASK, args=[task.id], countdown=get_settings().baseline_refresh_debounce_s
        )
    return {"submission_id": submission_id, "status": result.status}


@shared_task(
    name=REFRESH_TASK,
    autoretry_for=(OperationalError, InterfaceError),  # the store restarted: try again
    retry_backoff=True,
    max_retries=5,
)
def refresh_baseline(task_id: str) -> int:
    """Recompute a task's Arena baseline from its evaluated submissions; store a new version.

    The baseline's figures are order statistics read in the database (`sql_baseline`), so a
    refresh costs a few indexed queries however many submissions the task has.

    At most one refresh per task is scheduled at a time (`queries.claim_refresh`), so its cost is
    shared by every merge that happened during the debounce interval. Two can still overlap (a
    merge schedules the next as soon as this one starts; an operator can run one by hand): both
    then ask for the same version number, the database's unique key rejects the second, and it
    computes again from what it reads then, so the newest version is never older than either.
    """
    with session_scope() as session:
        queries.release_refresh(session, task_id=task_id)
    attempt = 1
    while True:
        try:
            return _store_baseline(task_id)
        except IntegrityError:
            # A concurrent refresh of the task stored this version first (the refresh a merge
            # scheduled while this one ran, or one started by hand): read the state again.
            if attempt == REFRESH_ATTEMPTS:
                raise
            attempt += 1


def _store_baseline(task_id: str) -> int:
    """Compute the task's baseline; store it as a new version unless it equals the newest."""
    with session_scope() as session:
        task = queries.get_task(session, task_id=task_id)
        profile = profile_named(task.profile)
        # Order statistics read in the database: O(1) rows instead of every submission.
        baseline = sql_baseline(session, task_id=task_id, profile=profile.arena)
        current = queries.current_baseline(session, task_id=task_id)
        data = baseline.to_dict()
        if current is not None and current.data == data:
            return current.version
        return queries.add_baseline(
            session, task_id=task_id, data=data, submission_count=baseline.submission_count
        )
