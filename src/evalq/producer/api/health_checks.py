"""The checks behind GET /healthz: is the database reachable, is the broker reachable.

Importing this module loads what the checks need (SQLAlchemy's engine, kombu's connection, the
wire models) and none of the API, so `evalq api` can answer its health check while the rest of
the API is still importing (`evalq.producer.api.front`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kombu.connection import Connection
from sqlalchemy import text

from evalq.producer.api.models import Check, Health
from evalq.store.db import engine_for
from evalq.workers.redis_url import sentinel_options

if TYPE_CHECKING:
    from evalq.core.settings import Settings

TIMEOUT_S = 2.0


def database_check(url: str) -> Check:
    """``SELECT 1`` on the store."""
    try:
        engine = engine_for(url)
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    except Exception as error:  # any failure means "not reachable"; the type is the detail
        return Check(ok=False, detail=f"unreachable ({type(error).__name__})")
    return Check(ok=True, detail=engine.dialect.name)


def broker_check(url: str | None, master_name: str | None = None) -> Check:
    """One connection to the broker, bounded by a short timeout."""
    if not url:  # `evalq api` then evaluates in its own process (an in-process worker)
        return Check(ok=True, detail="in-process (no EVALQ_BROKER_URL)")
    options: dict[str, Any] = {"socket_connect_timeout": TIMEOUT_S, "socket_timeout": TIMEOUT_S}
    options |= sentinel_options(url, master_name)
    try:
        with Connection(url, transport_options=options) as connection:  # type: ignore[no-untyped-call]
            connection.ensure_connection(max_retries=1, interval_start=0, timeout=TIMEOUT_S)
            transport = str(connection.transport_cls)
    except Exception as error:  # as above
        return Check(ok=False, detail=f"unreachable ({type(error).__name__})")
    return Check(ok=True, detail=transport)


def prepare(settings: Settings) -> None:
    """Load the database driver and the broker's client library the checks will use (creating
    the engine and the transport connects to nothing), so the first check imports nothing."""
    engine_for(settings.database_url)
    if settings.broker_url:
        options = sentinel_options(settings.broker_url, settings.redis_master_name)
        with Connection(settings.broker_url, transport_options=options) as connection:  # type: ignore[no-untyped-call]
            connection.transport  # noqa: B018  # instantiating it imports its client library


def health_of(settings: Settings) -> Health:
    """Both checks; ``status`` is "ok" only when both pass (the route answers 503 otherwise)."""
    database = database_check(settings.database_url)
    broker = broker_check(settings.broker_url, settings.redis_master_name)
    status = "ok" if database.ok and broker.ok else "unavailable"
    return Health(status=status, database=database, broker=broker)
