"""Throw-away stores and Redis databases for integration tests."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import redis
import sqlalchemy as sa

from evalq.store.db import engine_for, upgrade
from tests.support.services import PG_ADMIN_URL, PG_HOST, PG_PORT, REDIS_HOST, REDIS_PORT, need


@contextmanager
def fresh_database(backend: str, directory: Path, *, prefix: str = "evalq_test_") -> Iterator[str]:
    """A migrated, empty store; a PostgreSQL one is dropped afterwards.

    Args:
        backend: ``sqlite`` (a file ``evalq.db`` in ``directory``) or ``postgresql`` (a new
            database next to ``PG_ADMIN_URL``; skipped locally, failed in CI, when PostgreSQL
            is not reachable).
        directory: Where the SQLite file goes.

    Yields:
        The store's URL.
    """
    if backend == "sqlite":
        url = f"sqlite:///{directory / 'evalq.db'}"
        upgrade(url)
        yield url
        return
    need(PG_HOST, PG_PORT, "PostgreSQL")
    name = f"{prefix}{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    try:
        upgrade(url)
        yield url
    finally:
        engine_for(url).dispose()
        deadline = time.monotonic() + 60
        while not _dropped(admin, name):  # a drill may have left PostgreSQL restarting
            if time.monotonic() > deadline:
                raise TimeoutError(f"could not drop database {name} within 60 s")
            time.sleep(0.5)
        admin.dispose()


def _dropped(admin: sa.Engine, name: str) -> bool:
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        return True
    except sa.exc.OperationalError:
        return False


@contextmanager
def private_redis(db: int) -> Iterator[str]:
    """Redis database ``db``, flushed before and after (FLUSHDB, never FLUSHALL).

    Args:
        db: The database number; each suite that flushes uses its own.

    Yields:
        The database's URL.
    """
    need(REDIS_HOST, REDIS_PORT, "Redis")
    url = f"redis://{REDIS_HOST}:{REDIS_PORT}/{db}"
    client = redis.Redis.from_url(url)
    client.flushdb()
    try:
        yield url
    finally:
        client.flushdb()
        client.close()
