"""Reads and writes of the store. Every function takes the session as a keyword argument."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import case, func, select, update
from sqlalchemy.orm import Session

from evalq.core.errors import Conflict, InvalidInput, NotFound
from evalq.core.profile import Profile, profile_named
from evalq.core.redact import redact_data
from evalq.core.results import EvaluationScores, MissingTier, TierOutcome
from evalq.core.schemas import STORED, TIERS, Status, Submission, Task, Tier, canonical_hash
from evalq.core.settings import Settings
from evalq.store.models import (
    BaselineRow,
    EvaluationRow,
    SubmissionRow,
    TaskRow,
    TierResultRow,
    utcnow,
)
from evalq.store.upsert import upsert

FINAL_TIER_STATES = ("ok", "skipped", "failed")
EVALUATED = ("done", "degraded")
"""Submission statuses that rankings and baselines count (a ``failed`` one is left out)."""


# --- tasks -----------------------------------------------------------------------------------


def put_task(session: Session, *, task: Task) -> bool:
    """Create or replace a task definition; True when anything changed."""
    definition = task.model_dump(mode="json")
    digest = canonical_hash(definition)
    row = session.get(TaskRow, task.id)
    if row is not None and row.content_hash == digest:
        return False
    upsert(
        session,
        TaskRow.__table__,  # type: ignore[arg-type]
        values={
            "id": task.id,
            "definition": definition,
            "content_hash": digest,
            "updated_at": utcnow(),
            "refresh_scheduled": False,
        },
        keys=["id"],
        update={"definition": definition, "content_hash": digest, "updated_at": utcnow()},
    )
    return True


def unknown_task_rule(task_id: str) -> str:
    """The rule a submission naming an undefined task breaks, as every front door words it."""
    return f"unknown task {task_id!r}; define it first"


def get_task_or_invalid(session: Session, *, task_id: str) -> Task:
    """The task a submission names; `InvalidInput` on ``task_id`` when it is not defined."""
    try:
        return get_task(session, task_id=task_id)
    except NotFound:
        raise InvalidInput([("task_id", unknown_task_rule(task_id))]) from None


def missing_tasks(session: Session, *, task_ids: Collection[str]) -> set[str]:
    """Those of ``task_ids`` that name no stored task (asked 500 at a time: SQLite's limit)."""
    wanted = sorted(set(task_ids))
    stored: set[str] = set()
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        stored.update(session.scalars(select(TaskRow.id).where(TaskRow.id.in_(chunk))))
    return set(wanted) - stored


@dataclass(frozen=True)
class TaskOverview:
    """One task as `evalq task list` shows it: its definition and its runs counted by status."""

    task: Task
    statuses: dict[str, int]
    last_activity: datetime | None


def task_overviews(session: Session) -> list[TaskOverview]:
    """Every task, by id, with its submissions counted by status (one grouped query)."""
    counts: dict[str, dict[str, int]] = {}
    latest: dict[str, datetime] = {}
    grouped = session.execute(
        select(
            SubmissionRow.task_id,
            SubmissionRow.status,
            func.count(),
            func.max(SubmissionRow.updated_at),
        ).group_by(SubmissionRow.task_id, SubmissionRow.status)
    )
    for task_id, status, count, updated in grouped:
        counts.setdefault(task_id, {})[status] = int(count)
        latest[task_id] = max(updated, latest.get(task_id, updated))
    tasks = session.scalars(select(TaskRow).order_by(TaskRow.id))
    return [
        TaskOverview(
            task=Task.model_validate(row.definition, context=STORED),
            statuses=counts.get(row.id, {}),
            last_activity=latest.get(row.id),
        )
        for row in tasks
    ]


def task_submissions(
    session: Session, *, task_id: str, statuses: Collection[str] = (), limit: int = 100
) -> list[SubmissionRow]:
    """A task's submissions, most recently updated first, optionally only those ``statuses``."""
    query = select(SubmissionRow).where(SubmissionRow.task_id == task_id)
    if statuses:
        query = query.where(SubmissionRow.status.in_(statuses))
    return list(session.scalars(query.order_by(SubmissionRow.updated_at.desc()).limit(limit)))


def get_task(session: Session, *, task_id: str) -> Task:
    """The task ``task_id``; `NotFound` when there is none."""
    row = session.get(TaskRow, task_id)
    if row is None:
        raise NotFound(f"task {task_id!r} does not exist")
    return Task.model_validate(row.definition, context=STORED)


# --- submissions -----------------------------------------------------------------------------


def add_submission(session: Session, *, submission: Submission, cost_usd: float | None) -> bool:
    """Store a new submission as queued; True when created, False when it already existed.

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
    get_task_or_invalid(session, task_id=submission.task_id)
    usage = submission.usage
    session.add(
        SubmissionRow(
            id=submission.id,
            task_id=submission.task_id,
            content_hash=digest,
            payload=submission.model_dump(mode="json"),
            status="queued",
            tool=submission.tool,
            model=submission.model,
            variant=submission.variant,
            run_index=submission.run_index,
            total_tokens=usage.tokens,
            tool_calls=usage.tool_calls,
            iterations=usage.iterations,
            execution_time=usage.execution_time,
            cost_usd=cost_usd,
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
    """

    submission: Submission
    task: Task
    profile: Profile
    cost_usd: float | None


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


def mark_running(session: Session, *, submission_id: str) -> None:
    """queued -> running; a finished submission keeps its status."""
    session.execute(
        update(SubmissionRow)
        .where(SubmissionRow.id == submission_id, SubmissionRow.status == "queued")
        .values(status="running", updated_at=utcnow())
    )


def stuck_submissions(session: Session, *, older_than: timedelta, limit: int = 1000) -> list[str]:
    """Ids of submissions queued or running with no progress for longer than ``older_than``."""
    cutoff = utcnow() - older_than
    rows = session.scalars(
        select(SubmissionRow.id)
        .where(SubmissionRow.status.in_(("queued", "running")), SubmissionRow.updated_at < cutoff)
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
            SubmissionRow.status.in_(("queued", "running")),
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
            SubmissionRow.status.in_(("queued", "running")),
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


def current_attempts(session: Session, *, ids: Sequence[str]) -> dict[str, int]:
    """The enqueue attempt of each of ``ids`` that exists and is not final yet."""
    rows = session.execute(
        select(SubmissionRow.id, SubmissionRow.enqueue_count).where(
            SubmissionRow.id.in_(ids), SubmissionRow.status.in_(("queued", "running"))
        )
    )
    return {row.id: row.enqueue_count for row in rows}


def status_counts(session: Session, *, ids: Sequence[str]) -> dict[str, str]:
    """Status of each submission id among ``ids`` that exists."""
    rows = session.execute(
        select(SubmissionRow.id, SubmissionRow.status).where(SubmissionRow.id.in_(ids))
    )
    return {row.id: row.status for row in rows}


# --- manual review ---------------------------------------------------------------------------


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


def accept_review(session: Session, *, submission_id: str) -> None:
    """Accept a flagged submission: it counts towards its task's baseline again.

    Accepting an accepted submission again changes nothing.

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
        return
    row = get_submission_row(session, submission_id=submission_id)
    if row.review != "accepted":
        raise InvalidInput([("review", f"submission {submission_id!r} is not flagged for review")])


def flagged_submissions(session: Session, *, task_id: str | None = None) -> list[SubmissionRow]:
    """Submissions flagged for review and not yet accepted (of one task, or all), by id."""
    query = select(SubmissionRow).where(SubmissionRow.review == "flagged")
    if task_id is not None:
        query = query.where(SubmissionRow.task_id == task_id)
    return list(session.scalars(query.order_by(SubmissionRow.id)))


# --- tier results ----------------------------------------------------------------------------


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
        update={k: values[k] for k in ("status", "metrics", "error", "updated_at")},
    )


def final_tier_values(
    submission_id: str, outcome: TierOutcome, *, now: datetime
) -> dict[str, object]:
    """The values of a final tier row, configured secrets removed (`redact_data`): the one
    place a `TierOutcome` becomes a row, for one tier (`finish_tier`) or a batch's skipped
    tiers (`store.intake`)."""
    metrics, error = redact_data(outcome.stored())
    return {
        "submission_id": submission_id,
        "tier": outcome.tier,
        "status": outcome.status,
        "metrics": metrics,
        "error": error,
        "deliveries": 1,
        "updated_at": now,
    }


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


# --- evaluations -----------------------------------------------------------------------------


def save_evaluation(
    session: Session,
    *,
    submission_id: str,
    task_id: str,
    status: str,
    scores: EvaluationScores,
    missing_tiers: dict[str, MissingTier],
    baseline_version: int,
    profile_hash: str,
) -> None:
    """Upsert the evaluation of a submission: a second merge replaces, never duplicates.

    Like `finish_tier`, the scores and missing tiers are stored with configured secrets removed.
    """
    table = EvaluationRow.__table__
    fields = {
        "task_id": task_id,
        "status": status,
        "scores": redact_data(scores.model_dump(mode="json")),
        "missing_tiers": redact_data(
            {
                name: missing.model_dump(mode="json", exclude_none=True)
                for name, missing in missing_tiers.items()
            }
        ),
        "baseline_version": baseline_version,
        "profile_hash": profile_hash,
        "evaluated_at": utcnow(),
    }
    upsert(
        session,
        table,  # type: ignore[arg-type]
        values={"submission_id": submission_id, "merge_count": 1, **fields},
        keys=["submission_id"],
        update={**fields, "merge_count": table.c.merge_count + 1},
    )


def get_evaluation(session: Session, *, submission_id: str) -> EvaluationRow | None:
    """The evaluation of a submission, if merged."""
    return session.get(EvaluationRow, submission_id)


def task_evaluations(
    session: Session, *, task_id: str
) -> list[tuple[SubmissionRow, EvaluationRow]]:
    """Every evaluated submission of a task with its evaluation (``failed`` ones left out)."""
    rows = session.execute(
        select(SubmissionRow, EvaluationRow)
        .join(EvaluationRow, EvaluationRow.submission_id == SubmissionRow.id)
        .where(SubmissionRow.task_id == task_id, SubmissionRow.status.in_(EVALUATED))
        .order_by(SubmissionRow.id)
    )
    return [(row[0], row[1]) for row in rows]


# --- baselines -------------------------------------------------------------------------------


def current_baseline(session: Session, *, task_id: str) -> BaselineRow | None:
    """The newest baseline snapshot of a task, if any was computed."""
    return session.scalars(
        select(BaselineRow)
        .where(BaselineRow.task_id == task_id)
        .order_by(BaselineRow.version.desc())
        .limit(1)
    ).first()


def add_baseline(
    session: Session, *, task_id: str, data: dict[str, Any], submission_count: int
) -> int:
    """Store a new baseline version (previous + 1) and return it."""
    latest = session.scalar(
        select(func.max(BaselineRow.version)).where(BaselineRow.task_id == task_id)
    )
    version = (latest or 0) + 1
    session.add(
        BaselineRow(task_id=task_id, version=version, data=data, submission_count=submission_count)
    )
    session.flush()
    return version


def claim_refresh(session: Session, *, task_id: str) -> bool:
    """Mark a baseline refresh of the task as scheduled; False when one already is (debounce)."""
    result = session.execute(
        update(TaskRow)
        .where(TaskRow.id == task_id, TaskRow.refresh_scheduled.is_(False))
        .values(refresh_scheduled=True)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


def release_refresh(session: Session, *, task_id: str) -> None:
    """Allow the next refresh of the task to be scheduled (called as a refresh starts)."""
    session.execute(update(TaskRow).where(TaskRow.id == task_id).values(refresh_scheduled=False))
