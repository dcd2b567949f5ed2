"""Sessions: the runs that share a conversation, evaluated as a unit (docs/sessions.md).

A run is a turn of a session when its metadata carries ``gen_ai.conversation.id`` (the
OpenTelemetry GenAI semantic conventions), else ``session.id`` (OpenInference and the general
conventions): a run made from a trace takes it from its spans or resource
(`evalq.traces.convert.identity_metadata`); a submission sent as JSON may set it itself. A
session belongs to one task: the same id under two tasks is two sessions.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from evalq.core.results import Record

MAX_SESSION_ID_CHARS = 200
"""Longest session id kept (a longer one is cut)."""
SESSION_KEYS = ("gen_ai.conversation.id", "session.id")
"""The metadata keys naming a run's session, first found wins."""


def session_of(metadata: Mapping[str, Any] | None) -> str | None:
    """The session ``metadata`` names, or None."""
    for key in SESSION_KEYS:
        found = (metadata or {}).get(key)
        if isinstance(found, str) and found.strip():
            return found.strip()[:MAX_SESSION_ID_CHARS]
    return None


SessionStatus = Literal["open", "evaluating", "evaluated"]
"""open: a turn was merged since its last evaluation (or it has none yet); evaluating: the
session sweep holds it; evaluated: its scores are those of its turns as they stand."""


class SessionTurn(Record):
    """One turn of a session as the session's evaluation read it."""

    submission_id: str
    status: str = Field(description="The run's own evaluation status.")
    success: bool = Field(
        description="The task's rules met by this turn: the suite gate (suite tasks), the "
        "Scylla pass (scylla), else every success criterion of the task on the turn's evidence "
        "(with none, evidence.success); a failed evaluation is no success."
    )
    value: float | None = Field(
        description="The turn's own ranking value on 0..1 (the Arena overall / 100)."
    )
    tool_calls: int
    tools: tuple[str, ...] = Field(description="The tools its trace called, in order.")


class SessionScores(Record):
    """A session evaluated as a unit (docs/sessions.md): the task's rules over every turn."""

    turns: int
    passed: bool = Field(description="The last turn succeeded (the board's first key).")
    turns_to_success: int | None = Field(
        description="The 1-based number of the first turn that succeeded; null: none did."
    )
    success_rate: float = Field(description="Fraction of the turns that succeeded.")
    score: float | None = Field(
        description="Mean of the turns' ranking values (0..1); null when none has one."
    )
    tool_calls: int = Field(description="Tool calls over the whole session.")
    tool_calls_per_turn: float
    tools: tuple[str, ...] = Field(description="Distinct tools called in the session, sorted.")
    failed_turns: tuple[str, ...] = Field(
        description="Turns whose own evaluation failed or is degraded."
    )
    judge: dict[str, float | None] | None = Field(
        default=None,
        description="The deployment's judge over the session's transcript (every turn's output "
        "in order): rubric -> score in [0, 1]; null when no judge is configured.",
    )
    judge_failed: bool = Field(
        default=False, description="A rubric that applied could not be judged."
    )
    turn_results: tuple[SessionTurn, ...]


class SessionResult(BaseModel):
    """Body of GET /v1/sessions/{session_id}: a session, its turns and its scores."""

    task_id: str
    session_id: str
    status: SessionStatus
    turns: list[str] = Field(description="Its runs' submission ids, in turn order.")
    evaluations: int = Field(description="How many times the session was evaluated.")
    last_turn_at: datetime
    evaluated_at: datetime | None
    scores: SessionScores | None = Field(description="Its last evaluation; null before one.")


class SessionRank(BaseModel):
    """One row of a task's session board."""

    rank: int
    session_id: str
    status: SessionStatus
    turns: int
    passed: bool | None
    turns_to_success: int | None
    score: float | None
    evaluated_at: datetime | None


class SessionBoard(BaseModel):
    """Body of GET /v1/tasks/{task_id}/sessions: the task's evaluated sessions, best first
    (passed, then fewest turns to success, then score; standard competition ranks), then the
    open ones."""

    task_id: str
    evaluated: int
    sessions: list[SessionRank]
