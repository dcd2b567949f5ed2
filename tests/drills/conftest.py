"""Fixtures of the fault drills: Redis db 14 (`EVALQ_TEST_DRILL_REDIS_DB`), a fresh PostgreSQL
store, worker processes."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.drills import harness


@pytest.fixture
def broker_url() -> Iterator[str]:
    """Redis db 14 or `EVALQ_TEST_DRILL_REDIS_DB` (broker and result backend), flushed before
    and after the drill."""
    url = harness.redis_drill_url()
    harness.flush_broker(url)
    yield url
    harness.flush_broker(url)


@pytest.fixture
def store_url(tmp_path: Path) -> Iterator[str]:
    """A fresh, migrated PostgreSQL database."""
    with harness.fresh_postgres(tmp_path) as url:
        yield url


@pytest.fixture
def env(store_url: str, broker_url: str) -> dict[str, str]:
    """The drill's process environment (EVALQ_* settings of `harness.DRILL_SETTINGS`)."""
    return harness.drill_env(store_url, broker_url)


@pytest.fixture
def pool(env: dict[str, str], request: pytest.FixtureRequest) -> Iterator[harness.Workers]:
    """Worker processes, stopped at the end; logs in $TMPDIR/evalq-drills/TEST/ (kept)."""
    logs = Path(tempfile.gettempdir()) / "evalq-drills" / request.node.name
    shutil.rmtree(logs, ignore_errors=True)
    with harness.workers(env, logs) as started:
        yield started
