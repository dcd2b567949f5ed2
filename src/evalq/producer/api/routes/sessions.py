"""Sessions: a session (the runs sharing a conversation, evaluated as a unit) and a task's
session board. docs/sessions.md."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query

from evalq.core.sessions import SessionBoard, SessionResult
from evalq.producer.api.auth import require
from evalq.producer.api.deps import ClientDep
from evalq.producer.api.errors import ERROR_RESPONSES
from evalq.producer.api.models import Message
from evalq.read.sessions import MAX_BOARD

router = APIRouter(tags=["sessions"])
READ = [Depends(require("read"))]


@router.get(
    "/v1/sessions/{session_id}",
    summary="A session: its turns (runs) in order, its status and its scores",
    response_model=SessionResult,
    dependencies=READ,
    responses={404: {"model": Message, "description": "No such session."}, **ERROR_RESPONSES},
)
def get_session(
    session_id: str,
    client: ClientDep,
    task_id: Annotated[
        str | None,
        Query(description="The session's task, when several tasks have a session of this id."),
    ] = None,
) -> SessionResult:
    """The session ``session_id`` (its runs' ``gen_ai.conversation.id`` or ``session.id``)."""
    return client.session(session_id, task_id=task_id)


@router.get(
    "/v1/tasks/{task_id}/sessions",
    summary="A task's session board: evaluated sessions best first, then the open ones",
    response_model=SessionBoard,
    dependencies=READ,
    responses={404: {"model": Message, "description": "No such task."}, **ERROR_RESPONSES},
)
def get_session_board(
    task_id: str,
    client: ClientDep,
    limit: Annotated[int, Query(ge=1, le=MAX_BOARD, description="Most rows.")] = 100,
) -> SessionBoard:
    """The task's sessions, ranked by passed, fewest turns to success, then score."""
    return client.session_board(task_id, limit=limit)
