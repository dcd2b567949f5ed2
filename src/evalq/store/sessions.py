"""Sessions in the store: their turns (written by the merge), their claims and scores (written
by the session sweep), and the reads of the session board and page (docs/sessions.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Table, and_, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from evalq.core.sessions import SessionScores
from evalq.store.models import (
    EvaluationRow,
    SessionRow,
    SessionTurnRow,
    SubmissionRow,
    TaskRow,
    TraceRow,
    utcnow,
)

SESSIONS: Table = SessionRow.__table__  # type: ignore[assignment]
TURNS: Table = SessionTurnRow.__table__  # type: ignore[assignment]


@dataclass(frozen=True)
class Turn:
    """A run the merge found to be a turn of a session."""

    task_id: str
    session_id: str
    submission_id: str


def note_turns(session: Session, *, turns: Sequence[Turn]) -> None:
    """Record ``turns`` and open their sessions (again): each is due for an evaluation once
    no turn of it was merged for the quiet period. In the merge's transaction, in two
    statements whatever the number of turns."""
    if not turns:
        return
    now = utcnow()
    rows = [
        {
            "submission_id": t.submission_id,
            "task_id": t.task_id,
            "session_id": t.session_id,
            "added_at": now,
        }
        for t in {t.submission_id: t for t in turns}.values()
    ]
    into = _insert(session, TURNS).values(rows)
    excluded = into.excluded
    session.execute(
        into.on_conflict_do_update(
            index_elements=["submission_id"],
            set_={"task_id": excluded.task_id, "session_id": excluded.session_id},
        )
    )
    opened = [
        {
            "task_id": task_id,
            "session_id": session_id,
            "status": "open",
            "last_turn_at": now,
            "evaluations": 0,
            "turns": 0,
        }
        for task_id, session_id in sorted({(t.task_id, t.session_id) for t in turns})
    ]
    into = _insert(session, SESSIONS).values(opened)
    session.execute(
        into.on_conflict_do_update(
            index_elements=["task_id", "session_id"],
            set_={"status": "open", "last_turn_at": into.excluded.last_turn_at},
        )
    )


def _insert(session: Session, table: Table) -> Any:
    """The dialect's INSERT, which has ON CONFLICT (SQLite and PostgreSQL)."""
    if session.get_bind().dialect.name == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)


def due_sessions(
    session: Session, *, quiet: timedelta, reclaim_after: timedelta, limit: int
) -> list[tuple[str, str]]:
    """Sessions quiet for ``quiet`` and open (or claimed longer ago than ``reclaim_after``),
    the longest quiet first."""
    now = utcnow()
    rows = session.execute(
        select(SessionRow.task_id, SessionRow.session_id)
        .where(_due(now, quiet, reclaim_after))
        .order_by(SessionRow.last_turn_at)
        .limit(limit)
    )
    return [(task_id, session_id) for task_id, session_id in rows]


def _due(now: datetime, quiet: timedelta, reclaim_after: timedelta) -> Any:
    return or_(
        and_(SessionRow.status == "open", SessionRow.last_turn_at <= now - quiet),
        and_(SessionRow.status == "evaluating", SessionRow.claimed_at <= now - reclaim_after),
    )


def claim_session(
    session: Session,
    *,
    task_id: str,
    session_id: str,
    quiet: timedelta,
    reclaim_after: timedelta,
) -> datetime | None:
    """Claim a due session for its evaluation (one of concurrent sweeps wins); the claim's
    time, or None when it is not due (any more)."""
    now = utcnow()
    changed = session.execute(
        update(SessionRow)
        .where(
            SessionRow.task_id == task_id,
            SessionRow.session_id == session_id,
            _due(now, quiet, reclaim_after),
        )
        .values(status="evaluating", claimed_at=now)
        .execution_options(synchronize_session=False)
    )
    return now if changed.rowcount == 1 else None  # type: ignore[attr-defined]


@dataclass(frozen=True)
class StoredTurn:
    """A turn as stored: its submission, its evaluation, and when it started."""

    payload: dict[str, Any]
    status: str
    scores: dict[str, Any]


def stored_turns(session: Session, *, task_id: str, session_id: str) -> list[StoredTurn]:
    """The session's evaluated turns in the order they happened: the run's trace start when it
    came in as a trace, else when it was stored."""
    started = func.coalesce(TraceRow.start_ns, 0)
    rows = session.execute(
        select(SubmissionRow.payload, EvaluationRow.status, EvaluationRow.scores)
        .join(SessionTurnRow, SessionTurnRow.submission_id == SubmissionRow.id)
        .join(EvaluationRow, EvaluationRow.submission_id == SubmissionRow.id)
        .outerjoin(TraceRow, TraceRow.submission_id == SubmissionRow.id)
        .where(SessionTurnRow.task_id == task_id, SessionTurnRow.session_id == session_id)
        .order_by(started, SubmissionRow.created_at, SubmissionRow.id)
    )
    return [StoredTurn(payload, status, scores) for payload, status, scores in rows]


def task_row(session: Session, *, task_id: str) -> TaskRow | None:
    """The session's task."""
    return session.get(TaskRow, task_id)


def store_scores(
    session: Session, *, task_id: str, session_id: str, claimed_at: datetime, scores: SessionScores
) -> bool:
    """Store the session's evaluation, unless a turn reopened it (or another sweep took it)
    since ``claimed_at``: then the next sweep evaluates it again. Whether it was stored."""
    changed = session.execute(
        update(SessionRow)
        .where(
            SessionRow.task_id == task_id,
            SessionRow.session_id == session_id,
            SessionRow.status == "evaluating",
            SessionRow.claimed_at == claimed_at,
        )
        .values(
            status="evaluated",
            evaluated_at=utcnow(),
            evaluations=SessionRow.evaluations + 1,
            turns=scores.turns,
            passed=scores.passed,
            turns_to_success=scores.turns_to_success,
            score=scores.score,
            scores=scores.model_dump(mode="json"),
        )
        .execution_options(synchronize_session=False)
    )
    return bool(changed.rowcount == 1)  # type: ignore[attr-defined]


def session_rows(session: Session, *, session_id: str, task_id: str | None) -> list[SessionRow]:
    """The sessions of that id (one per task that has it; only ``task_id``'s when given)."""
    query = select(SessionRow).where(SessionRow.session_id == session_id)
    if task_id is not None:
        query = query.where(SessionRow.task_id == task_id)
    return list(session.scalars(query.order_by(SessionRow.task_id)))


def turn_ids(session: Session, *, task_id: str, session_id: str) -> list[str]:
    """The session's runs' ids in turn order (those evaluated and those not yet)."""
    started = func.coalesce(TraceRow.start_ns, 0)
    return list(
        session.scalars(
            select(SessionTurnRow.submission_id)
            .join(SubmissionRow, SubmissionRow.id == SessionTurnRow.submission_id)
            .outerjoin(TraceRow, TraceRow.submission_id == SessionTurnRow.submission_id)
            .where(SessionTurnRow.task_id == task_id, SessionTurnRow.session_id == session_id)
            .order_by(started, SubmissionRow.created_at, SubmissionRow.id)
        )
    )


def session_of_run(session: Session, *, submission_id: str) -> SessionTurnRow | None:
    """The session a run is a turn of, if any."""
    return session.get(SessionTurnRow, submission_id)


def board_rows(session: Session, *, task_id: str, limit: int) -> list[SessionRow]:
    """A task's sessions, best first: evaluated ones by passed, fewest turns to success and
    score (nulls last), then the open ones by their last turn."""
    evaluated = SessionRow.evaluations > 0
    return list(
        session.scalars(
            select(SessionRow)
            .where(SessionRow.task_id == task_id)
            .order_by(
                evaluated.desc(),
                SessionRow.passed.is_(True).desc(),
                SessionRow.turns_to_success.is_(None),
                SessionRow.turns_to_success,
                SessionRow.score.is_(None),
                SessionRow.score.desc(),
                SessionRow.last_turn_at.desc(),
                SessionRow.session_id,
            )
            .limit(limit)
        )
    )


def evaluated_count(session: Session, *, task_id: str) -> int:
    """How many of the task's sessions have an evaluation."""
    return int(
        session.scalar(
            select(func.count())
            .select_from(SessionRow)
            .where(SessionRow.task_id == task_id, SessionRow.evaluations > 0)
        )
        or 0
    )
