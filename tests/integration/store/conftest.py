"""The store's tests run on three backends: SQLite, PostgreSQL, and the same PostgreSQL through
a real PgBouncer in transaction pooling mode (tests/support/pgbouncer.py), the way a deployment
past one machine reaches it (docs/deploy.md, "PgBouncer")."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.databases import fresh_database

BACKENDS = ["sqlite", "postgresql", "pgbouncer"]


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A migrated, empty database of each backend (this directory's: with PgBouncer)."""
    with fresh_database(request.param, tmp_path) as url:
        yield url
