"""Monitoring fixtures: a Redis database of our own (db 10) and evalq subprocesses."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.support.databases import private_redis
from tests.support.processes import process_env

MONITOR_REDIS_DB = 10
"""The monitoring tests' Redis database (other suites use database 9)."""


@pytest.fixture
def redis10_url() -> Iterator[str]:
    """Redis database 10, flushed before and after, for one test."""
    with private_redis(MONITOR_REDIS_DB) as url:
        yield url


def evalq_env(**settings: str) -> dict[str, str]:
    """This process's environment without EVALQ_* and FLOWER_* variables, plus ``settings``."""
    return process_env(settings, drop=("EVALQ_", "FLOWER_"))
