"""Run tickets in the store: a plan issued, listed, its tickets used at intake and read.

A plan's tickets are one INSERT; a batch of submissions checks its tickets in one query and
uses them in one conditional UPDATE each (``WHERE used_by IS NULL``), in the transaction that
stores the runs: of two batches sending one ticket, one stores its run and the other is
refused, nothing of it stored. Deadlines are kept in UTC (SQLite keeps no time zone) and
compared in Python with the caller's clock.
"""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import cast

from sqlalchemy import Table, insert, select, update
from sqlalchemy.orm import Session

from evalq.core.errors import Conflict, InvalidInput
from evalq.core.schemas import Submission
from evalq.core.status import PENDING_STATUSES
from evalq.core.tickets import (
    PAGE_MAX,
    TICKET_PREFIX,
    PlanList,
    PlanRequest,
    RegisteredPlan,
    Ticket,
    new_plan_id,
)
from evalq.store.chunks import chunks
from evalq.store.models import BoardFiguresRow, RunTicketRow, SubmissionRow, utcnow

TICKETS = cast(Table, RunTicketRow.__table__)


def _utc(moment: datetime) -> datetime:
    """``moment`` in UTC (a naive one, as SQLite returns it, is UTC already)."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def new_ticket_id() -> str:
    """An unguessable ticket id (`evalq.core.tickets.TICKET_PATTERN`)."""
    return TICKET_PREFIX + secrets.token_urlsafe(24)


def issue_plan(
    session: Session,
    *,
    task_id: str,
    request: PlanRequest,
    issued_by: str | None,
    now: datetime | None = None,
) -> RegisteredPlan:
    """Store ``request``'s tickets as one plan of ``task_id`` (a stored task) and return it
    with every ticket."""
    now = _utc(now or utcnow())
    plan_id = request.id or new_plan_id()
    deadline = _utc(request.deadline)
    seeds: list[int | None] = [*request.seeds] if request.seeds else [None] * request.runs
    earlier = session.scalars(
        select(RunTicketRow)
        .where(RunTicketRow.plan_id == plan_id)
        .order_by(RunTicketRow.plan_id, RunTicketRow.position)
    ).all()
    if earlier:
        return _replayed(earlier, task_id, request, now)
    tickets = [Ticket(id=new_ticket_id(), seed=seed) for seed in seeds]
    session.execute(
        insert(TICKETS),
        [
            {
                "id": ticket.id,
                "plan_id": plan_id,
                "position": position,
                "task_id": task_id,
                "variant": request.variant,
                "seed": ticket.seed,
                "issued_at": now,
                "deadline": deadline,
                "issued_by": issued_by,
                "used_by": None,
            }
            for position, ticket in enumerate(tickets)
        ],
    )
    return RegisteredPlan(
        id=plan_id,
        task_id=task_id,
        variant=request.variant,
        runs=request.runs,
        deadline=deadline,
        issued_at=now,
        issued_by=issued_by,
        used=0,
        unused=request.runs,
        expired=0,
        tickets=tickets,
    )


def _replayed(
    rows: Sequence[RunTicketRow], task_id: str, request: PlanRequest, now: datetime
) -> RegisteredPlan:
    """The plan ``rows`` registered earlier under ``request``'s id, if it is ``request``.

    Raises:
        Conflict: the id names another plan.
    """
    stored = (
        rows[0].task_id,
        rows[0].variant,
        len(rows),
        max(_utc(r.deadline) for r in rows),
        [r.seed for r in rows],
    )
    asked = (
        task_id,
        request.variant,
        request.runs,
        _utc(request.deadline),
        [*request.seeds] if request.seeds else [None] * request.runs,
    )
    if stored != asked:
        raise Conflict(
            f"plan {request.id!r} exists with other runs, variant, seeds or deadline; plan ids "
            "are idempotency keys, use a new id for a new plan"
        )
    return _plan(rows, with_tickets=True, now=now).model_copy(update={"created": False})


def plans_of(
    session: Session, *, task_id: str, with_tickets: bool = False, now: datetime | None = None
) -> PlanList:
    """The task's plans, the newest first (at most `PAGE_MAX`), with their used, unused and
    expired counts at ``now``; each with its tickets when ``with_tickets``."""
    now = _utc(now or utcnow())
    rows = session.scalars(
        select(RunTicketRow)
        .where(RunTicketRow.task_id == task_id)
        .order_by(RunTicketRow.plan_id, RunTicketRow.position)
    ).all()
    by_plan: dict[str, list[RunTicketRow]] = {}
    for row in rows:
        by_plan.setdefault(row.plan_id, []).append(row)
    plans = [_plan(found, with_tickets=with_tickets, now=now) for found in by_plan.values()]
    plans.sort(key=lambda plan: (plan.issued_at, plan.id), reverse=True)
    return PlanList(task_id=task_id, plans=plans[:PAGE_MAX])


def _plan(rows: Sequence[RunTicketRow], *, with_tickets: bool, now: datetime) -> RegisteredPlan:
    """One plan from its tickets, each counted by its own deadline."""
    first = rows[0]
    unused = [_utc(row.deadline) for row in rows if row.used_by is None]
    return RegisteredPlan(
        id=first.plan_id,
        task_id=first.task_id,
        variant=first.variant,
        runs=len(rows),
        deadline=max(_utc(row.deadline) for row in rows),
        issued_at=_utc(first.issued_at),
        issued_by=first.issued_by,
        used=len(rows) - len(unused),
        unused=sum(deadline > now for deadline in unused),
        expired=sum(deadline <= now for deadline in unused),
        tickets=[Ticket(id=r.id, seed=r.seed, used_by=r.used_by) for r in rows]
        if with_tickets
        else None,
    )


def check_tickets(
    session: Session, submissions: Sequence[Submission], *, now: datetime | None = None
) -> None:
    """Refuse the batch unless each ticket among ``submissions`` (the batch's new runs) is
    stored, for the run's task and variant, unused (by the stored runs and earlier in the
    batch) and not past its deadline at ``now``.

    Raises:
        InvalidInput: on ``ticket``, for the first run whose ticket breaks a rule.
    """
    sent = [s for s in submissions if s.ticket is not None]
    if not sent:
        return
    now = _utc(now or utcnow())
    wanted = {s.ticket for s in sent}
    stored = {
        row.id: row
        for row in session.scalars(select(RunTicketRow).where(RunTicketRow.id.in_(wanted)))
    }
    seen: Counter[str] = Counter()
    for submission in sent:
        ticket = cast(str, submission.ticket)
        seen[ticket] += 1
        rule = _ticket_rule(submission, stored.get(ticket), now, again=seen[ticket] > 1)
        if rule is not None:
            raise InvalidInput([("ticket", rule)])


def _ticket_rule(
    submission: Submission, row: RunTicketRow | None, now: datetime, *, again: bool
) -> str | None:
    if row is None:
        return "no such ticket: a ticket is issued by POST /v1/tasks/{id}/plans (evalq plan)"
    if row.task_id != submission.task_id:
        return f"the ticket is for task {row.task_id!r}, not {submission.task_id!r}"
    if row.variant != submission.variant:
        return f"the ticket is for variant {row.variant}, not {submission.variant}"
    if row.used_by is not None or again:
        used = row.used_by or "another run of this batch"
        return f"the ticket was used by {used}: a ticket is used by one run only"
    deadline = _utc(row.deadline)
    if deadline <= now:
        return f"the ticket's deadline {deadline.isoformat()} has passed: it counts as a failure"
    return None


def use_tickets(session: Session, submissions: Sequence[Submission]) -> None:
    """Mark each ticket among ``submissions`` (new runs just inserted, their tickets checked)
    used by its run, each only if still unused.

    Raises:
        InvalidInput: on ``ticket``: a concurrent batch used one first (the caller's
            transaction rolls back, nothing of this batch stored).
    """
    for submission in submissions:
        if submission.ticket is None:
            continue
        won = session.execute(
            update(RunTicketRow)
            .where(RunTicketRow.id == submission.ticket, RunTicketRow.used_by.is_(None))
            .values(used_by=submission.id)
            .execution_options(synchronize_session=False)
        )
        if won.rowcount != 1:  # type: ignore[attr-defined]
            raise InvalidInput(
                [("ticket", "the ticket was used by another run: a ticket is used by one run only")]
            )


@dataclass(frozen=True)
class VariantTickets:
    """A variant's tickets as a read finds them at its clock.

    Attributes:
        issued: every ticket of its plans.
        used: the submissions that used one, with the ticket's deadline passed or not.
        settled: tickets used by a run evaluated since (done, degraded or failed).
        waiting: tickets the variant's runs may still use or whose run is being evaluated:
            unused before their deadline, or used by a run still queued or running.
        expired: tickets unused at their deadline: each a failure.
        due: the latest deadline among the waiting tickets (None without any).
    """

    issued: int
    used: frozenset[str]
    settled: int
    waiting: int
    expired: int
    due: datetime | None


def tickets_of(
    session: Session, *, task_id: str, now: datetime | None = None
) -> dict[str, VariantTickets]:
    """Each variant of ``task_id`` that has tickets, by name, as at ``now`` (one query)."""
    now = _utc(now or utcnow())
    rows = session.execute(
        select(
            RunTicketRow.variant, RunTicketRow.deadline, RunTicketRow.used_by, SubmissionRow.status
        )
        .outerjoin(SubmissionRow, SubmissionRow.id == RunTicketRow.used_by)
        .where(RunTicketRow.task_id == task_id)
    ).all()
    issued: Counter[str] = Counter()
    used: dict[str, set[str]] = {}
    settled: Counter[str] = Counter()
    waiting: Counter[str] = Counter()
    expired: Counter[str] = Counter()
    due: dict[str, datetime] = {}
    for variant, deadline, used_by, status in rows:
        issued[variant] += 1
        deadline = _utc(deadline)
        if used_by is not None:
            used.setdefault(variant, set()).add(used_by)
        if (used_by is None and deadline > now) or status in PENDING_STATUSES:
            waiting[variant] += 1
            due[variant] = max(due.get(variant, deadline), deadline)
        elif used_by is None:
            expired[variant] += 1
        else:
            settled[variant] += 1
    return {
        variant: VariantTickets(
            issued=n,
            used=frozenset(used.get(variant, ())),
            settled=settled[variant],
            waiting=waiting[variant],
            expired=expired[variant],
            due=due.get(variant),
        )
        for variant, n in issued.items()
    }


def lapsed_since_drawn(session: Session, *, now: datetime | None = None) -> list[str]:
    """The tasks whose stored board figures were drawn before one of their unused tickets'
    deadline passed, as at ``now``: each such ticket has become a failure at the worst cost
    (`evalq.read.plans`) and the stored board does not say so yet, so the task's refresh is due
    (`evalq.tasks.tickets`). One query over the plans with unused tickets (a plan's tickets
    share their deadline), one over those tasks' figures; a task whose board was never drawn
    has nothing stored to bring up to date."""
    now = _utc(now or utcnow())
    lapsed: dict[str, datetime] = {}
    for task_id, deadline in session.execute(
        select(RunTicketRow.task_id, RunTicketRow.deadline)
        .where(RunTicketRow.used_by.is_(None))
        .group_by(RunTicketRow.task_id, RunTicketRow.deadline)
    ):
        deadline = _utc(deadline)
        if deadline <= now and deadline > lapsed.get(task_id, datetime.min.replace(tzinfo=UTC)):
            lapsed[task_id] = deadline
    if not lapsed:
        return []
    due: list[str] = []
    for chunk in chunks(sorted(lapsed)):
        figures = select(BoardFiguresRow.task_id, BoardFiguresRow.computed_at)
        for task_id, drawn_at in session.execute(figures.where(BoardFiguresRow.task_id.in_(chunk))):
            if _utc(drawn_at) < lapsed[task_id]:
                due.append(task_id)
    return due
