"""Integration fixtures: a fresh store on SQLite or PostgreSQL, a private Redis database."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalq.profiles import profile_named
from evalq.settings import get_settings
from tests.support.databases import fresh_database, private_redis

REDIS_TEST_DB = int(os.environ.get("EVALQ_TEST_REDIS_DB", "9"))
"""Redis database the integration tests flush and use (override to run two suites at once)."""


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


def configure(monkeypatch: pytest.MonkeyPatch, **env: str) -> None:
    """Set EVALQ_* variables and drop every cache built from the old ones."""
    for key, value in env.items():
        monkeypatch.setenv(f"EVALQ_{key.upper()}", value)
    get_settings.cache_clear()
    profile_named.cache_clear()
