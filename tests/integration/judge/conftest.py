"""Judge integration fixtures: Redis database 15 under a random key prefix, the OpenAI stub."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
import redis

from tests.support.services import REDIS_HOST, REDIS_PORT, need

JUDGE_REDIS_DB = int(os.environ.get("EVALQ_TEST_JUDGE_REDIS_DB", "15"))


@pytest.fixture
def judge_redis() -> Iterator[tuple[redis.Redis, str]]:
    """A Redis client on database 15 and a fresh key prefix; only that prefix is cleaned up."""
    need(REDIS_HOST, REDIS_PORT, "Redis")
    client = redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=JUDGE_REDIS_DB)
    prefix = f"evalq-test-judge:{uuid.uuid4().hex}"
    yield client, prefix
    keys = list(client.scan_iter(match=f"{prefix}:*"))
    if keys:
        client.delete(*keys)
    client.close()
