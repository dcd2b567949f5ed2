"""The read side of sessions: a session with its turns and scores, a task's session board,
and the session a run is a turn of (docs/sessions.md). Reads never write."""

from __future__ import annotations

from sqlalchemy.orm import Session

from evalq.core.errors import InvalidInput, NotFound
from evalq.core.sessions import SessionBoard, SessionRank, SessionResult, SessionScores
from evalq.store import queries
from evalq.store import sessions as stored
from evalq.store.models import SessionRow
from evalq.store.webhooks import as_utc

MAX_BOARD = 1000
"""Most rows a session board returns."""


def session_result(session: Session, *, session_id: str, task_id: str | None) -> SessionResult:
    """The session ``session_id`` (of ``task_id`` when several tasks have one of that id).

    Raises:
        NotFound: no such session.
        InvalidInput: on ``task_id`` when several tasks have a session of that id.
    """
    rows = stored.session_rows(session, session_id=session_id, task_id=task_id)
    if not rows:
        raise NotFound(f"session {session_id!r} does not exist")
    if len(rows) > 1:
        tasks = ", ".join(row.task_id for row in rows)
        rule = f"several tasks have a session {session_id!r} ({tasks}): name one"
        raise InvalidInput([("task_id", rule)])
    return result_of(session, rows[0])


def result_of(session: Session, row: SessionRow) -> SessionResult:
    """A stored session as served."""
    return SessionResult(
        task_id=row.task_id,
        session_id=row.session_id,
        status=row.status,
        turns=stored.turn_ids(session, task_id=row.task_id, session_id=row.session_id),
        evaluations=row.evaluations,
        last_turn_at=as_utc(row.last_turn_at),
        evaluated_at=None if row.evaluated_at is None else as_utc(row.evaluated_at),
        scores=None if row.scores is None else SessionScores.model_validate(row.scores),
    )


def run_session(session: Session, *, submission_id: str) -> SessionResult | None:
    """The session a run is a turn of; None when it is none's."""
    turn = stored.session_of_run(session, submission_id=submission_id)
    if turn is None:
        return None
    row = session.get(SessionRow, (turn.task_id, turn.session_id))
    return None if row is None else result_of(session, row)


def session_board(session: Session, *, task_id: str, limit: int = 100) -> SessionBoard:
    """The task's session board: evaluated sessions best first, ranked (standard competition
    ranking over passed, turns to success and score), then the open ones, unranked.

    Raises:
        NotFound: no such task.
        InvalidInput: on ``limit`` outside 1..`MAX_BOARD`.
    """
    if not 1 <= limit <= MAX_BOARD:
        raise InvalidInput([("limit", f"must be from 1 to {MAX_BOARD}")])
    queries.get_task(session, task_id=task_id)
    rows = stored.board_rows(session, task_id=task_id, limit=limit)
    ranks: list[SessionRank] = []
    previous: tuple[object, ...] | None = None
    rank = 0
    for position, row in enumerate(rows, 1):
        key = (row.passed, row.turns_to_success, None if row.score is None else round(row.score, 4))
        if row.evaluations == 0:
            rank = 0
        elif key != previous:
            rank, previous = position, key
        ranks.append(
            SessionRank(
                rank=rank,
                session_id=row.session_id,
                status=row.status,
                turns=row.turns,
                passed=row.passed,
                turns_to_success=row.turns_to_success,
                score=row.score,
                evaluated_at=None if row.evaluated_at is None else as_utc(row.evaluated_at),
            )
        )
    return SessionBoard(
        task_id=task_id,
        evaluated=stored.evaluated_count(session, task_id=task_id),
        sessions=ranks,
    )
