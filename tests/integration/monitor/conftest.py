"""Monitoring fixtures: a Redis database of our own (db 10)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.support.databases import private_redis
from tests.support.monitor import MONITOR_REDIS_DB


@pytest.fixture
def redis10_url() -> Iterator[str]:
    """Redis database 10, flushed before and after, for one test."""
    with private_redis(MONITOR_REDIS_DB) as url:
        yield url
