"""Which failures are retried, and the backoff that honours Retry-After."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelAuthenticationError,
    ModelConnectionError,
    ModelHTTPError,
    ModelQuotaExceededError,
    ModelRateLimitError,
    ModelServerError,
    ModelTimeoutError,
    UnexpectedModelBehavior,
)

from evalq.judge.retry import DeadlineReached, backoff_delay, classify, retry_after


def http(
    category: type[ModelRateLimitError | ModelServerError | ModelAuthenticationError], status: int
) -> ModelHTTPError:
    return ModelHTTPError.for_category(category, status_code=status, model_name="m")


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (ModelHTTPError(429, "m"), "transient"),
        (ModelHTTPError(500, "m"), "transient"),
        (ModelHTTPError(502, "m"), "transient"),
        (ModelHTTPError(503, "m"), "transient"),
        (ModelHTTPError(504, "m"), "transient"),
        (ModelHTTPError(408, "m"), "transient"),
        (ModelHTTPError(400, "m"), "permanent"),
        (ModelHTTPError(401, "m"), "permanent"),
        (ModelHTTPError(403, "m"), "permanent"),
        (ModelHTTPError(404, "m"), "permanent"),
        (ModelHTTPError(422, "m"), "permanent"),
        (
            ModelHTTPError.for_category(ModelRateLimitError, status_code=429, model_name="m"),
            "transient",
        ),
        (
            ModelHTTPError.for_category(ModelServerError, status_code=500, model_name="m"),
            "transient",
        ),
        (
            ModelHTTPError.for_category(ModelAuthenticationError, status_code=401, model_name="m"),
            "permanent",
        ),
        (ModelQuotaExceededError("m", "no credit"), "permanent"),
        (ModelConnectionError("m", "reset by peer"), "transient"),
        (ModelTimeoutError("m", "read timeout"), "transient"),
        (ModelAPIError("m", "odd"), "transient"),
        (UnexpectedModelBehavior("Exceeded maximum output retries (2)"), "invalid_output"),
        (DeadlineReached("late"), "deadline"),
        (TimeoutError(), "transient"),
        (ConnectionResetError(), "transient"),
        (ValueError("a bug"), "permanent"),
    ],
)
def test_classify(error: BaseException, kind: str) -> None:
    assert classify(error) == kind


def test_retry_after_header_is_read() -> None:
    assert retry_after(ModelHTTPError(429, "m", headers={"Retry-After": "7"})) == 7.0
    assert retry_after(ModelHTTPError(429, "m", headers={"retry-after-ms": "250"})) == 0.25
    assert retry_after(ModelHTTPError(429, "m")) is None
    assert retry_after(ValueError()) is None


def test_backoff_doubles_within_jitter_and_caps() -> None:
    rng = random.Random(1)
    # nominal d = min(cap, base * 2**(n-1)): 1, 2, 4, 8, then the cap 10
    for n, nominal in [(1, 1), (2, 2), (3, 4), (4, 8), (5, 10), (9, 10)]:
        delay = backoff_delay(n, base_s=1, cap_s=10, server_wait_s=None, rng=rng)
        assert nominal / 2 <= delay <= nominal


def test_retry_after_is_a_floor() -> None:
    rng = random.Random(0)
    assert backoff_delay(1, base_s=1, cap_s=10, server_wait_s=30, rng=rng) == 30
    assert 0.5 <= backoff_delay(1, base_s=1, cap_s=10, server_wait_s=0.1, rng=rng) <= 1


def test_retry_numbers_start_at_1() -> None:
    with pytest.raises(ValueError):
        backoff_delay(0, base_s=1, cap_s=1, server_wait_s=None, rng=random.Random())


@given(st.integers(1, 30), st.floats(0.001, 5), st.floats(0, 60), st.integers(0, 2**32))
def test_backoff_bounds(retry: int, base: float, cap: float, seed: int) -> None:
    nominal = min(cap, base * 2 ** (retry - 1))
    delay = backoff_delay(
        retry, base_s=base, cap_s=cap, server_wait_s=None, rng=random.Random(seed)
    )
    assert nominal / 2 <= delay <= nominal
