"""The shared token bucket in the real Redis: atomic across clients, RPM and TPM, refills."""

from __future__ import annotations

import asyncio
import math
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis

from evalq.judge.ratelimit import SharedRateLimit
from evalq.judge.retry import DeadlineReached
from tests.integration.judge.conftest import JUDGE_REDIS_DB
from tests.support.services import REDIS_HOST, REDIS_PORT

pytestmark = pytest.mark.integration


def limiter(client: redis.Redis, prefix: str, rpm: int, tpm: int) -> SharedRateLimit:
    return SharedRateLimit(client, "model-a", rpm, tpm, prefix)


def test_concurrent_takers_on_separate_connections_share_one_bucket(
    judge_redis: tuple[redis.Redis, str],
) -> None:
    _, prefix = judge_redis

    # 40 takers, each on its own connection (as separate workers would be), rpm = 10: the 10
    # the bucket holds are granted, plus one per 6 s the takes took (a slow machine's refill)
    def take(_: int) -> float:
        own = redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=JUDGE_REDIS_DB)
        try:
            return limiter(own, prefix, 10, 0).try_take(1)
        finally:
            own.close()

    started = time.monotonic()
    with ThreadPoolExecutor(20) as pool:
        waits = list(pool.map(take, range(40)))
    refilled = math.floor((time.monotonic() - started) / 6)
    assert 10 <= sum(w == 0 for w in waits) <= 10 + refilled
    assert all(w > 0 for w in waits if w != 0)


def test_token_bucket_limits_by_tokens(judge_redis: tuple[redis.Redis, str]) -> None:
    client, prefix = judge_redis
    bucket = limiter(client, prefix, 0, 1000)  # unlimited requests, 1000 tokens per minute
    first = time.monotonic()
    assert bucket.try_take(400) == 0 and bucket.try_take(400) == 0
    # 200 left, 400 needed: (400 - 200) tokens at 1000/60000 per ms = 12000 ms
    wait = bucket.try_take(400)
    # less by the time that passed since the first take, as the bucket refilled meanwhile (a
    # second's refill is a second less to wait): a slow machine cannot fail the bound
    assert 12.0 - (time.monotonic() - first) - 0.01 <= wait <= 12.0
    # a refused take takes nothing: a 150-token request still fits
    assert bucket.try_take(150) == 0


def test_requests_over_capacity_are_clamped_not_starved(
    judge_redis: tuple[redis.Redis, str],
) -> None:
    client, prefix = judge_redis
    assert limiter(client, prefix, 0, 100).try_take(10_000) == 0  # asks for the whole bucket


def test_bucket_refills_continuously(judge_redis: tuple[redis.Redis, str]) -> None:
    client, prefix = judge_redis
    bucket = limiter(client, prefix, 600, 0)  # 10 requests per second
    granted = 0
    while bucket.try_take(1) == 0:  # drain: 600 at once, plus what refills meanwhile
        granted += 1
    assert granted >= 600
    start = time.monotonic()
    time.sleep(0.35)  # at least 3.5 requests refill
    refilled = sum(bucket.try_take(1) == 0 for _ in range(10))
    elapsed = time.monotonic() - start
    # Bounds from the time that really passed, so a slow machine cannot fail the test.
    assert 3 <= refilled <= math.ceil(elapsed * 10) + 1


def test_take_waits_then_gives_up_at_the_deadline(judge_redis: tuple[redis.Redis, str]) -> None:
    client, prefix = judge_redis
    bucket = limiter(client, prefix, 12, 0)  # one request per 5 s once empty
    while bucket.try_take(1) == 0:  # drain (a refused take takes nothing)
        pass
    # what is left to wait, as the bucket says it; the wait is measured against it, not
    # against the clock of a drain that a busy machine may have slowed
    due = bucket.try_take(1)
    assert 0 < due <= 5.0
    waited = asyncio.run(bucket.take_async(1, deadline=time.monotonic() + 60))
    assert waited > due - 0.5  # it waited for the token (a hang is pytest-timeout's to catch)
    # the bucket is empty again: a token is ~5 s away, far past a deadline 0.1 s ahead
    with pytest.raises(DeadlineReached):
        asyncio.run(bucket.take_async(1, deadline=time.monotonic() + 0.1))


def test_bucket_keys_expire(judge_redis: tuple[redis.Redis, str]) -> None:
    client, prefix = judge_redis
    bucket = limiter(client, prefix, 10, 100)
    bucket.try_take(1)
    for key in bucket.keys:
        assert key.startswith(prefix) and 0 < client.pttl(key) <= 120_000
