"""Integration fixtures: a fresh store on SQLite or PostgreSQL, a private Redis database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.databases import fresh_database, private_redis
from tests.support.settings import REDIS_TEST_DB, configure


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A migrated, empty database of each backend."""
    with fresh_database(request.param, tmp_path) as url:
        yield url


@pytest.fixture
def redis_url() -> Iterator[str]:
    """A Redis database of its own, flushed before and after."""
    with private_redis(REDIS_TEST_DB) as url:
        yield url


__all__ = ["REDIS_TEST_DB", "configure", "db_url", "redis_url"]  # configure: re-exported for now
