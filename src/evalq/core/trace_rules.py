"""A task's rule for the traces it evaluates (online evaluation): filters and a sampling rate.

Spans streamed to ``POST /v1/traces`` whose trace names no task (no ``evalq.task_id``, no
``task_id`` with the request) are offered to the tasks' rules once the run is over: a rule takes
a trace when every filter holds and the trace is sampled. Sampling is decided from the trace id
alone (`sampled`), so every process, and a backfill run later, agrees on which traces a rate
takes. docs/traces.md, "Online evaluation rules".
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_core import PydanticCustomError

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
        strict=True,  # false is not a rate of 0
        description="Share of the matching traces taken, decided from the trace id.",
    )


class TraceRuleOf(BaseModel):
    """A task's rule, as stored and served."""

    task_id: str
    rule: TraceRule


EARLIEST_BOUND = datetime(1678, 1, 1, tzinfo=UTC)
LATEST_BOUND = datetime(2262, 1, 1, tzinfo=UTC)
"""A backfill's bounds lie in [EARLIEST_BOUND, LATEST_BOUND]: span times are stored as int64
nanoseconds since 1970 (about 1677-09-21 to 2262-04-11), rounded inwards to whole years."""
BOUND_RULE = (
    "must be from 1678-01-01T00:00:00Z to 2262-01-01T00:00:00Z "
    "(span times are stored as int64 nanoseconds since 1970)"
)
ORDER_RULE = "must not be before since (until == since is an empty range)"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _storable_bound(moment: datetime) -> datetime:
    """The bound in UTC (a time without an offset is UTC, as the store's times are), or a
    validation error when no stored span time can be compared with it."""
    aware = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
    if not EARLIEST_BOUND <= aware <= LATEST_BOUND:  # compared first: 0001-01-01+01:00 has no UTC
        raise PydanticCustomError("backfill_bound", BOUND_RULE)
    return aware.astimezone(UTC)


def _a_time_not_a_number(value: Any) -> Any:
    """A bound as the document states it, a date-time string (or a `datetime` in Python):
    pydantic would read a number as seconds since 1970, which the document does not allow."""
    if isinstance(value, int | float):
        raise PydanticCustomError("backfill_bound", "must be an ISO 8601 date-time string")
    return value


BOUND_YEARS = r"^(1679|16[89]\d|1[7-9]\d\d|2[01]\d\d|22[0-5]\d|226[01])-"
Bound = Annotated[
    datetime,
    BeforeValidator(_a_time_not_a_number),
    AfterValidator(_storable_bound),
    # The years 1679-2261, so no UTC offset takes a bound the schema allows out of range.
    Field(
        description="From 1678-01-01T00:00:00Z to 2262-01-01T00:00:00Z (span times are int64 "
        "nanoseconds since 1970).",
        json_schema_extra={"pattern": BOUND_YEARS},
    ),
]


class BackfillRequest(BaseModel):
    """The time range of a backfill: the untaken traces whose first span started in
    [since, until). A bound without a UTC offset is UTC; both lie from 1678 to 2262, the
    times int64 nanoseconds hold. ``until == since`` is an empty range (nothing is taken);
    ``until`` before ``since`` is refused, naming ``until``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    since: Bound
    until: Bound

    @field_validator("until")
    @classmethod
    def _not_before_since(cls, until: datetime, info: ValidationInfo) -> datetime:
        since = info.data.get("since")
        if since is not None and until < since:
            raise PydanticCustomError("backfill_order", ORDER_RULE)
        return until

    @property
    def start_ns(self) -> int:
        """``since`` in nanoseconds since 1970, exactly (no float rounding)."""
        return _nanoseconds(self.since)

    @property
    def end_ns(self) -> int:
        """``until`` in nanoseconds since 1970."""
        return _nanoseconds(self.until)


def parse_backfill(data: Any) -> BackfillRequest:
    """A valid backfill range, or `InvalidInput` naming ``since`` / ``until`` and the rule."""
    try:
        return BackfillRequest.model_validate(data)
    except ValidationError as error:
        raise InvalidInput(problems_of(error)) from None


def _nanoseconds(moment: datetime) -> int:
    return (moment - _EPOCH) // timedelta(microseconds=1) * 1000


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
