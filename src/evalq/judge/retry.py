"""Which judge failures are worth another attempt, and how long to wait before it."""

from __future__ import annotations

import random
from typing import Literal

from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelHTTPError,
    ModelQuotaExceededError,
    ModelRequestRejectedError,
    RunTimedOut,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
)

FailureKind = Literal["transient", "permanent", "invalid_output", "deadline"]

TRANSIENT_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})


class BudgetSpent(Exception):
    """Raised before a model request once the evaluation's judge budget is spent."""


class DeadlineReached(Exception):
    """Raised when the wall-time budget leaves no room for another request or wait."""


def classify(error: BaseException) -> FailureKind:
    """Sort a failed judge call into what to do next.

    - ``transient``: rate limits (429), server errors (5xx), timeouts, connection resets and
      other provider faults without a status: retry after a backoff.
    - ``permanent``: the provider refused the request itself (400, 401, 403, 404, 422, quota):
      sending it again unchanged cannot succeed.
    - ``invalid_output``: the model kept answering outside the schema after pydantic-ai's
      output retries; another identical run is not worth paying for.
    - ``deadline``: the wall-time budget ran out.
    """
    if isinstance(error, DeadlineReached | RunTimedOut):
        return "deadline"
    if isinstance(error, ModelHTTPError):
        return "transient" if error.status_code in TRANSIENT_STATUS else "permanent"
    if isinstance(error, ModelRequestRejectedError | ModelQuotaExceededError):
        return "permanent"
    if isinstance(error, ModelAPIError):
        return "transient"
    if isinstance(error, UnexpectedModelBehavior | UsageLimitExceeded):
        return "invalid_output"
    if isinstance(error, TimeoutError | ConnectionError):
        return "transient"
    return "permanent"


def rate_limited(error: BaseException) -> bool:
    """True when the provider answered 429 Too Many Requests (counted for the operators)."""
    return isinstance(error, ModelHTTPError) and error.status_code == 429


def retry_after(error: BaseException) -> float | None:
    """Seconds the provider asked to wait (``Retry-After`` / ``retry-after-ms``), if it said."""
    if isinstance(error, ModelAPIError):
        return error.retry_after
    return None


def backoff_delay(
    retry: int, *, base_s: float, cap_s: float, server_wait_s: float | None, rng: random.Random
) -> float:
    """Seconds to wait before retry number ``retry`` (1 = the first retry).

    Exponential backoff with jitter: a draw from [d/2, d] with d = min(cap, base * 2**(retry-1)),
    so concurrent workers spread out but never retry sooner than half the nominal delay. A
    ``Retry-After`` from the provider is a floor: the wait is never shorter than it asked.
    """
    if retry < 1:
        raise ValueError("retry numbers start at 1")
    nominal = min(cap_s, base_s * 2 ** (retry - 1))
    delay = rng.uniform(nominal / 2, nominal)
    if server_wait_s is not None:
        delay = max(delay, server_wait_s)
    return delay
