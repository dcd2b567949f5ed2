"""Engines, sessions and migrations."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from evalq.core.settings import get_settings


@lru_cache(maxsize=8)
def engine_for(url: str) -> Engine:
    """One engine per database URL and process; SQLite gets WAL and a busy timeout."""
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=10)


def migrations_config() -> Config:
    """Alembic configuration pointing at the migrations shipped inside the package."""
    config = Config()
    config.set_main_option("script_location", "evalq.store:migrations")
    return config


def upgrade(url: str) -> None:
    """Apply every migration to the database at ``url`` (`evalq db upgrade`)."""
    engine = engine_for(url)
    with engine.begin() as connection:
        config = migrations_config()
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


_first_use = threading.Lock()
_factories: dict[str, sessionmaker[Session]] = {}


def _factory(url: str) -> sessionmaker[Session]:
    """The session factory of ``url``, made once per process.

    Its first use migrates a SQLite store (a no-op when it is current). Threads of one worker
    reach this together, and Alembic's command context is process-global, so the first use is
    serialised.
    """
    factory = _factories.get(url)
    if factory is not None:
        return factory
    with _first_use:
        if url not in _factories:
            if url.startswith("sqlite"):
                upgrade(url)
            _factories[url] = sessionmaker(engine_for(url), expire_on_commit=False)
        return _factories[url]


@contextmanager
def session_scope(url: str | None = None) -> Iterator[Session]:
    """A session in one transaction: committed on success, rolled back on error."""
    factory = _factory(url or get_settings().database_url)
    with factory() as session, session.begin():
        yield session
