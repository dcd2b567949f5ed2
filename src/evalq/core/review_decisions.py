"""A person's decision on a run held for review: accept it (it counts in its task's baseline
again) or un-accept it (held again), always with who decided, when, and why.

Both move the task's baseline, so neither is anonymous or silent: the reason is required at
every door, the decider is the API key's name (HTTP API, UI) or the name a Python or CLI caller
gives (``by=``, ``--by``, ``EVALQ_ACTOR``), and every decision is kept (an accept and the
un-accept that undoes it are two records).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from evalq.core.errors import InvalidInput
from evalq.core.schemas import Storable, Strict
from evalq.core.storable import string_rule

ReviewAction = Literal["accept", "unaccept"]
"""``accept``: a held run counts again; ``unaccept``: an accepted run is held again."""
MAX_REASON_CHARS = 500
MAX_BY_CHARS = 100
REASON_RULE = f"required: why, in 1 to {MAX_REASON_CHARS} characters (not only spaces)"
BY_RULE = (
    f"required: who decides, 1 to {MAX_BY_CHARS} characters (by=, --by or EVALQ_ACTOR; "
    "over HTTP the API key's name)"
)

Reason = Annotated[
    str,
    Field(min_length=1, max_length=MAX_REASON_CHARS, pattern=r"\S"),
    Storable,
]


class DecisionRequest(Strict):
    """Body of ``POST /v1/submissions/{id}/review/accept`` and ``.../review/unaccept``."""

    reason: Reason = Field(description=f"Why (required; {REASON_RULE}).")


class ReviewDecision(BaseModel):
    """One recorded decision on a run's review."""

    action: ReviewAction
    by: str = Field(description="Who decided: the API key's name, or the name the caller gave.")
    reason: str
    decided_at: datetime


class ReviewDecided(BaseModel):
    """What an accept or an un-accept did (the Python clients and the HTTP API answer this)."""

    submission_id: str
    task_id: str
    review: Literal["flagged", "accepted"] | None = Field(
        description="The run's review now: flagged (held), accepted, or null (released)."
    )
    changed: bool = Field(
        description="False when the run already was in that state: nothing was recorded."
    )
    decision: ReviewDecision | None = Field(
        description="The decision recorded now, or (nothing changed) the latest one of this "
        "action; null when there is none."
    )
    baseline_version: int = Field(description="The task's baseline after the refresh.")


def checked_reason(reason: object) -> str:
    """``reason`` with surrounding spaces removed; `InvalidInput` on ``reason`` unless it is
    text of 1 to `MAX_REASON_CHARS` characters."""
    text = reason.strip() if isinstance(reason, str) else ""
    if not text or len(text) > MAX_REASON_CHARS or string_rule(text) is not None:
        raise InvalidInput([("reason", REASON_RULE)])
    return text


def checked_decision(reason: object, by: object) -> tuple[str, str]:
    """The reason and the decider, checked; `InvalidInput` naming each one that is wrong."""
    problems: list[tuple[str, str]] = []
    try:
        text = checked_reason(reason)
    except InvalidInput as error:
        problems += error.problems
    name = by.strip() if isinstance(by, str) else ""
    if not name or len(name) > MAX_BY_CHARS or string_rule(name) is not None:
        problems.append(("by", BY_RULE))
    if problems:
        raise InvalidInput(problems)
    return text, name
