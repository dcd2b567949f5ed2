"""The reads every door serves, each assembled once: the API's routes, the CLI, `Client` and
the UI call these and render what they return.

A board, a comparison, a run's result and a report carry judge scores, so each carries the
judge's agreement with people beside them (`judge_validation`: "not validated" until it is);
attaching it here, and only here, is what keeps the doors from disagreeing about it
(`tests/unit/read/test_served.py` holds that no other module attaches it).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime

from pydantic import Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from evalq.core.errors import NotFound
from evalq.core.review_decisions import ReviewDecision
from evalq.core.schemas import Task
from evalq.core.settings import Settings, get_settings
from evalq.read.audit import audit_if_changed, unverified_marks, with_verifier
from evalq.read.boards import projector
from evalq.read.boards.query import BoardQuery
from evalq.read.compare import CompareReport, compare
from evalq.read.gate import GateReport, TooFew, gate, with_judge_changes, with_unverified
from evalq.read.judge_agreement import with_judge_validation
from evalq.read.judge_series import mixed_judges, with_judge_break
from evalq.read.leaderboard import LeaderboardReport, leaderboard
from evalq.read.reply import Reply
from evalq.read.report_data import ReportData, report_data
from evalq.read.submission import SubmissionResult, submission_result
from evalq.read.view import task_context
from evalq.stats.comparison import Correction
from evalq.store import queries
from evalq.store import standings as standings_store
from evalq.store import traces as trace_store
from evalq.store.baseline_sql import refresh_task_baseline
from evalq.store.db import replica_lag_s
from evalq.store.models import Review, TaskRow, utcnow
from evalq.store.versions import task_version


class LeaderLine(Reply):
    """First place on a task's unfiltered board, as the last refresh placed it."""

    submission_id: str
    tool: str | None
    model: str | None
    variant: str | None
    tied: int = Field(description="How many runs share first place (1: a clear leader).")
    text: str = Field(description="In a line: agent (or variant), run, how many tie.")


class TaskLine(Reply):
    """One task as the tasks page, `evalq task list` and ``GET /v1/tasks`` show it."""

    id: str
    kind: str
    kind_named: bool = Field(description="False: the kind is derived from the task's runs.")
    category: str | None
    statuses: dict[str, int] = Field(description="The task's submissions counted by status.")
    last_activity: datetime | None
    leader: LeaderLine | None = Field(
        description="Who leads the task's board (held runs and copies left out); null "
        "before its first refresh placed a run."
    )


class TaskList(Reply):
    """Every task, by id (``GET /v1/tasks``)."""

    tasks: list[TaskLine]


def task_list(session: Session) -> TaskList:
    """Every task, by id: kind, runs by status, last activity, and who leads its board."""
    overviews = queries.task_overviews(session)
    first = standings_store.leaders(session, task_ids=[o.task.id for o in overviews])
    lines = []
    for o in overviews:
        leader = first.get(o.task.id)
        lines.append(
            TaskLine(
                id=o.task.id,
                kind=o.kind,
                kind_named=o.task.kind is not None,
                category=o.task.category,
                statuses=o.statuses,
                last_activity=o.last_activity,
                leader=None if leader is None else LeaderLine(**vars(leader), text=leader.text),
            )
        )
    return TaskList(tasks=lines)


CHOICES_SHOWN = 500
"""Values per field a compare pick-list offers (the rest are still typed)."""


class CompareChoices(Reply):
    """What the compare form offers to pick: the tasks, and the groups present in them."""

    tasks: list[str]
    groups: dict[str, list[str]] = Field(
        description="tool, model and variant: the values of evaluated runs over every task "
        f"(from each board's stored filter values; at most {CHOICES_SHOWN} each)."
    )


def compare_choices(session: Session) -> CompareChoices:
    """The tasks and, per grouping field, the values their evaluated runs carry: read from each
    task's stored board figures (a task without them is read from its runs)."""
    tasks = list(session.scalars(select(TaskRow.id).order_by(TaskRow.id)))
    stored = standings_store.stored_choices(session)
    found: dict[str, set[str]] = {"tool": set(), "model": set(), "variant": set()}
    for task_id in tasks:
        choices = stored.get(task_id) or standings_store.choices(session, task_id=task_id)
        for name, values in found.items():
            values.update(choices.get(name, []))
    return CompareChoices(
        tasks=tasks,
        groups={name: sorted(values)[:CHOICES_SHOWN] for name, values in found.items()},
    )


def board(
    session: Session, query: BoardQuery, *, settings: Settings | None = None
) -> LeaderboardReport:
    """`leaderboard` for ``query`` with the judge's validation, and, for a paged read, the
    cursor of the next page and whether the board moved since the cursor's page was read
    (`evalq.read.boards.query`).

    Raises:
        NotFound: no such task.
        InvalidInput: as `leaderboard`, or a cursor this reader did not hand out for the
            query's filters and limit.
    """
    settings = settings or get_settings()
    asked, cursor = query.resolved()
    # read before the page: a merge committed in between makes the next page say the board
    # moved (it may not have, for that page), never the other way round
    version = task_version(session, task_id=asked.task_id) if asked.limit is not None else ""
    found = leaderboard(session, settings=settings, **asked.filters())
    shown = with_judge_validation(found, session, task_ids=[found.task_id], settings=settings)
    shown = with_judge_break(shown, session, task_ids=[found.task_id], settings=settings)
    paged: dict[str, object] = {
        "next_cursor": asked.next_cursor(version=version, total=found.total or 0)
    }
    if cursor is not None:
        paged["board_moved"] = cursor.version != version
    return with_replica_lag(with_verifier(shown.model_copy(update=paged), session), session)


def comparison(
    session: Session,
    *,
    tasks: str,
    by: str,
    values: Sequence[str] = (),
    correction: Correction = "holm",
    seed: int = 0,
    include_held: bool = False,
    settings: Settings | None = None,
) -> CompareReport:
    """`compare` with the judge's validation pooled over the tasks compared."""
    settings = settings or get_settings()
    found = compare(
        session,
        tasks=tasks,
        by=by,
        values=values,
        correction=correction,
        seed=seed,
        settings=settings,
        include_held=include_held,
    )
    shown = with_judge_validation(found, session, task_ids=found.tasks, settings=settings)
    return with_judge_break(shown, session, task_ids=found.tasks, settings=settings)


def run_result(
    session: Session, *, submission_id: str, settings: Settings | None = None
) -> SubmissionResult:
    """`submission_result`, with the judge's validation once it is evaluated (before, no
    judge score is shown, and none is attached).

    Raises:
        NotFound: no such submission; for a trace's id (``otlp-<trace id>``) whose trace is
            not a run (open, refused, failed, untaken), naming where it is and why.
    """
    settings = settings or get_settings()
    try:
        found = submission_result(session, submission_id=submission_id, settings=settings)
    except NotFound:
        trace = trace_store.trace_of_id(session, submission_id=submission_id)
        if trace is None or trace.status == "finalised":
            raise
        why = trace_store.reason(trace)
        raise NotFound(
            f"submission {submission_id!r} does not exist: its trace {trace.trace_id} is "
            f"{trace.status}{'' if why is None else f' ({why})'} (GET /v1/traces/"
            f"{trace.trace_id})"
        ) from None
    if found.scores is None:
        return found
    return with_judge_validation(found, session, task_ids=[found.task_id], settings=settings)


def report(
    session: Session,
    *,
    task_id: str,
    include_held: bool = False,
    settings: Settings | None = None,
) -> ReportData:
    """`report_data` with its board's judge validation."""
    settings = settings or get_settings()
    data = report_data(session, task_id=task_id, include_held=include_held, settings=settings)
    shown = with_judge_validation(data.leaderboard, session, task_ids=[task_id], settings=settings)
    shown = with_judge_break(shown, session, task_ids=[task_id], settings=settings)
    board = with_replica_lag(with_verifier(shown, session), session)
    return data.model_copy(update={"leaderboard": board})


def with_replica_lag(board: LeaderboardReport, session: Session) -> LeaderboardReport:
    """``board`` saying how far behind the primary it may be, when ``session`` reads a replica
    (`evalq.store.db.read_scope`)."""
    lag = replica_lag_s(session)
    return board if lag is None else board.model_copy(update={"replica_lag_s": lag})


def refresh_task(session: Session, *, task_id: str, settings: Settings | None = None) -> int:
    """What follows a batch of merges and an accepted review alike: settle the task's reviews
    and store its baseline again (`refresh_task_baseline`), score every run's standing against
    it, and draw a Scylla or suite board's whole-task figures again, in one transaction, so no
    board ranks against a baseline its rows were not scored on; how long it took is kept
    (`queries.note_refresh`: the next scheduled one is spaced by it). Returns the baseline
    version.

    Raises:
        sqlalchemy.exc.IntegrityError: a concurrent refresh stored this version first (the
            caller tries again in a new transaction).
    """
    settings = settings or get_settings()
    started = time.perf_counter()
    version = refresh_task_baseline(session, task_id=task_id, settings=settings)
    context = task_context(session, task_id=task_id, settings=settings)
    projector.project_task(session, context)
    cost = time.perf_counter() - started
    queries.note_refresh(session, task_id=task_id, cost_s=cost, ended_at=utcnow())
    return version


def define_task(session: Session, *, task: Task, settings: Settings | None = None) -> bool:
    """Store a task's definition (`queries.put_task`), audit it when it changed or was never
    audited, and when it changed a task that has evaluated runs, refresh the task in the same
    transaction (`refresh_task`): its standings are scored for the definition stored, so no
    board ranks runs on a definition they were not scored on. Every door that stores a task
    calls this. Returns whether anything changed.

    Raises:
        InvalidInput: as `queries.put_task`.
    """
    changed = queries.put_task(session, task=task, settings=settings)
    audit_if_changed(session, task_id=task.id, changed=changed, settings=settings)
    if changed and standings_store.has_standings(session, task_id=task.id):
        refresh_task(session, task_id=task.id, settings=settings)
    return changed


REVIEW_PAGE = 100
"""Held runs listed per page of the review queue."""


class HeldRun(Reply):
    """A run held for review, and why (its outlier flags; the validation warnings beside)."""

    id: str
    task_id: str
    tool: str
    model: str
    flags: list[str]
    warnings: list[str]


class HeldRuns(Reply):
    """One page of the review queue (`evalq review list`, the UI's review page)."""

    total: int = Field(description="Runs held for review (of the task, or all).")
    offset: int
    runs: list[HeldRun] = Field(description=f"By id, at most {REVIEW_PAGE} from offset.")


def held_runs(
    session: Session, *, task_id: str | None = None, offset: int = 0, limit: int = REVIEW_PAGE
) -> HeldRuns:
    """The runs held for review, a page at a time: two indexed statements and one JSON path
    per listed run, whatever the queue's length."""
    rows = queries.flagged_submissions(session, task_id=task_id, limit=limit, offset=offset)
    review = queries.review_flags(session, submission_ids=[row.id for row in rows])
    return HeldRuns(
        total=queries.count_flagged(session, task_id=task_id),
        offset=offset,
        runs=[
            HeldRun(
                id=row.id,
                task_id=row.task_id,
                tool=row.tool,
                model=row.model,
                flags=list(review.get(row.id, {}).get("flags") or []),
                warnings=list(review.get(row.id, {}).get("warnings") or []),
            )
            for row in rows
        ],
    )


class ReviewSubject(Reply):
    """A run someone is about to accept or un-accept: what the decision changes (its task's
    baseline), why it is held, and the decisions taken on it before."""

    id: str
    task_id: str
    tool: str
    model: str
    review: Review | None
    flags: list[str]
    decisions: list[ReviewDecision] = Field(description="Newest first.")


def review_subject(session: Session, *, submission_id: str) -> ReviewSubject:
    """The run ``submission_id`` as a review decision on it is confirmed.

    Raises:
        NotFound: no such submission.
    """
    row = queries.get_submission_row(session, submission_id=submission_id)
    review = queries.review_flags(session, submission_ids=[row.id]).get(row.id, {})
    return ReviewSubject(
        id=row.id,
        task_id=row.task_id,
        tool=row.tool,
        model=row.model,
        review=row.review,
        flags=list(review.get("flags") or []),
        decisions=queries.review_decisions(session, submission_id=row.id),
    )


def gate_report(
    session: Session,
    *,
    tasks: str,
    by: str,
    baseline: str,
    candidate: str,
    margin: float = 0.0,
    too_few: TooFew = "fail",
    correction: Correction = "holm",
    alpha: float = 0.05,
    seed: int = 0,
    include_held: bool = False,
    settings: Settings | None = None,
) -> GateReport:
    """`gate` with the judge's validation pooled over the tasks gated."""
    settings = settings or get_settings()
    found = gate(
        session,
        tasks=tasks,
        by=by,
        baseline=baseline,
        candidate=candidate,
        margin=margin,
        too_few=too_few,
        correction=correction,
        alpha=alpha,
        seed=seed,
        include_held=include_held,
        settings=settings,
    )
    gated = [t.task for t in found.tasks]
    found = with_unverified(found, unverified_marks(session, task_ids=gated))
    found = with_judge_changes(found, mixed_judges(session, task_ids=gated, settings=settings))
    return with_judge_validation(found, session, task_ids=gated, settings=settings)
