"""Run tickets on the wire: a variant's runs registered before they happen (docs/scoring.md).

A run plan a submitter declares on its own runs (``planned_runs``) is its own statement, made
after it has seen them: a variant can send its best 10 of 20 runs with ``planned_runs: 10``.
A **registered plan** is made before the runs: ``POST /v1/tasks/{id}/plans`` issues one batch
of tickets (one per run, each with an optional seed) that expire at a deadline. A run that
carries a ticket is one of the planned runs; once a variant has tickets only its ticketed runs
count for it, and every ticket with no run by its deadline counts as a failure at the task's
worst cost and time (`evalq.read.plans`). What a ticket proves, and what it cannot, is said in
docs/scoring.md: the count and the deadline were fixed first; which of the runs made were sent
is still the submitter's choice, unless the seeds make its runs reproducible.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from evalq.core.errors import InvalidInput
from evalq.core.schemas import problems_of

MAX_TICKETS = 1_000
"""Most tickets one plan issues (a variant may register more plans)."""
MAX_DEADLINE_DAYS = 366
"""A deadline at most this far ahead: a plan that never falls due never counts its misses."""
MIN_DEADLINE = timedelta(seconds=1)
"""A deadline at least this far ahead of the server's clock when the plan is registered."""
TICKET_PREFIX = "tkt_"
"""Every ticket id starts so (`TICKET_PATTERN`)."""
VARIANT_PATTERN = r"^T\d{1,3}$"
PLAN_PREFIX = "plan_"
PLAN_PATTERN = r"^plan_[A-Za-z0-9_-]{8,64}$"
MAX_SEED = 2**63 - 1
PAGE_MAX = 200
"""Plans one GET /v1/tasks/{id}/plans lists (the newest first)."""

Seed = Annotated[int, Field(ge=0, le=MAX_SEED, strict=True)]


class PlanRequest(BaseModel):
    """The body of ``POST /v1/tasks/{id}/plans``: the runs a variant will send, registered
    before they happen. Every door (HTTP API, Python clients, CLI) validates it here."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str | None = Field(
        default=None,
        pattern=PLAN_PATTERN,
        description="Idempotency key: the same id with the same plan returns the plan "
        "registered first (a retried request issues no second plan); with another plan, 409. "
        "Omitted: a new plan (the HTTP clients set one, so their retries are safe).",
    )
    variant: str = Field(pattern=VARIANT_PATTERN, description="The Scylla variant (T0..T999).")
    runs: int = Field(
        ge=1, le=MAX_TICKETS, strict=True, description="How many runs: one ticket each."
    )
    seeds: list[Seed] | None = Field(
        default=None,
        max_length=MAX_TICKETS,
        description="One seed per run (as many as ``runs``), each printed on its ticket; "
        "omitted: tickets without seeds.",
    )
    deadline: datetime = Field(
        description="When the runs are due (ISO 8601 with a time zone): a ticket with no run "
        f"by then counts as a failure. In the future, at most {MAX_DEADLINE_DAYS} days ahead."
    )

    @model_validator(mode="after")
    def _consistent(self) -> PlanRequest:
        if self.seeds is not None and len(self.seeds) != self.runs:
            raise ValueError(f"seeds: {len(self.seeds)} seeds for {self.runs} runs (one each)")
        return self


def deadline_rule(deadline: datetime, now: datetime | None) -> str | None:
    """Why ``deadline`` is not one a plan registered at ``now`` may have, or None (``now``
    None: its time zone alone is checked, as a client does before it sends the plan; the
    server checks it against its own clock)."""
    if deadline.tzinfo is None:
        return "must carry a time zone (2026-12-01T00:00:00Z)"
    if now is None:
        return None
    if deadline < now + MIN_DEADLINE:
        return f"must be in the future (the server's clock reads {now.isoformat()})"
    if deadline > now + timedelta(days=MAX_DEADLINE_DAYS):
        return f"must be at most {MAX_DEADLINE_DAYS} days ahead"
    return None


def parse_plan_request(data: Any, *, now: datetime | None = None) -> PlanRequest:
    """A valid plan, or `InvalidInput` naming each bad field and its rule (``now``: the
    server's clock the deadline is checked against; see `deadline_rule`)."""
    try:
        found = data if isinstance(data, PlanRequest) else PlanRequest.model_validate(data)
    except ValidationError as error:
        raise InvalidInput(problems_of(error)) from None
    rule = deadline_rule(found.deadline, now)
    if rule is not None:
        raise InvalidInput([("deadline", rule)])
    return found


def new_plan_id() -> str:
    """A plan id from the OS's random source (`PLAN_PATTERN`)."""
    return PLAN_PREFIX + secrets.token_hex(12)


class Ticket(BaseModel):
    """One run's ticket: send its ``id`` as the submission's ``ticket``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="The ticket: unguessable, used by exactly one submission.")
    seed: int | None = Field(description="The seed the run is to use; null when none was set.")
    used_by: str | None = Field(default=None, description="The submission that used it.")


class RegisteredPlan(BaseModel):
    """A plan as registered: its tickets, and how many are used, unused or expired."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="The plan (the batch its tickets were issued in).")
    created: bool = Field(
        default=True,
        description="False: a plan of this id was registered earlier and is returned as it was.",
    )
    task_id: str
    variant: str
    runs: int
    deadline: datetime
    issued_at: datetime
    issued_by: str | None = Field(description="The API key that registered it (null: local).")
    used: int = Field(description="Tickets a submission used.")
    unused: int = Field(description="Tickets still unused before the deadline (pending).")
    expired: int = Field(description="Tickets unused at the deadline: each counts as a failure.")
    tickets: list[Ticket] | None = Field(
        default=None,
        description="The tickets (in the reply that registers the plan, and when listed with "
        "tickets); null in a plain listing.",
    )


class PlanList(BaseModel):
    """A task's registered plans, the newest first."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str
    plans: list[RegisteredPlan]
