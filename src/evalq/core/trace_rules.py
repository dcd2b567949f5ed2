"""A task's rule for the traces it evaluates (online evaluation): filters and a sampling rate.

Spans streamed to ``POST /v1/traces`` whose trace names no task (no ``evalq.task_id``, no
``task_id`` with the request) are offered to the tasks' rules once the run is over: a rule takes
a trace when every filter holds and the trace is sampled. Sampling is decided from the trace id
alone (`sampled`), so every process, and a backfill run later, agrees on which traces a rate
takes. docs/traces.md, "Online evaluation rules".
"""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalq.core.errors import InvalidInput
from evalq.core.schemas import problems_of

AttributeValue = str | bool | int | float


class TraceRule(BaseModel):
    """Which traces a task takes. Every filter given must hold; none given: every trace.

    Attribute filters compare equal to a span attribute or a resource attribute of any span of
    the trace (``evalq.*`` ones included).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    service_name: str | None = Field(
        default=None, max_length=200, description="The resource's service.name equals this."
    )
    span_names: list[str] = Field(
        default_factory=list,
        max_length=20,
        description="Some span of the trace has one of these names.",
    )
    attributes: dict[str, AttributeValue] = Field(
        default_factory=dict,
        max_length=20,
        description="Each key equals its value on some span's or resource's attributes.",
    )
    sample_rate: float = Field(
        default=1.0,
        ge=0,
        le=1,
        description="Share of the matching traces taken, decided from the trace id.",
    )


class TraceRuleOf(BaseModel):
    """A task's rule, as stored and served."""

    task_id: str
    rule: TraceRule


class Backfilled(BaseModel):
    """The answer to a backfill: the submissions made from stored traces, and what was looked at."""

    task_id: str
    examined: int = Field(description="Untaken traces of the time range that were looked at.")
    taken: list[str] = Field(description="The submission ids made, one per trace taken.")


def parse_trace_rule(data: Any) -> TraceRule:
    """A valid rule, or `InvalidInput` naming each bad field and its rule."""
    try:
        return TraceRule.model_validate(data)
    except ValidationError as error:
        raise InvalidInput(problems_of(error)) from None


def sampled(trace_id: str, rate: float) -> bool:
    """True when ``rate`` takes the trace: the SHA-256 of its id, read as a fraction in [0, 1),
    is below ``rate``. The same in every process (no per-process hash seed)."""
    if rate >= 1:
        return True
    digest = hashlib.sha256(trace_id.lower().encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate
