"""GET /healthz: is the database reachable, is the broker reachable. No key needed."""

from __future__ import annotations

from fastapi import APIRouter, Response
from kombu.connection import Connection
from sqlalchemy import text

from evalq.producer.api.deps import SettingsDep
from evalq.producer.api.models import Check, Health
from evalq.store.db import engine_for

router = APIRouter(tags=["health"])
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


def broker_check(url: str | None) -> Check:
    """One connection to the broker, bounded by a short timeout."""
    if not url:  # `evalq api` then evaluates in its own process (an in-process worker)
        return Check(ok=True, detail="in-process (no EVALQ_BROKER_URL)")
    options = {"socket_connect_timeout": TIMEOUT_S, "socket_timeout": TIMEOUT_S}
    try:
        with Connection(url, transport_options=options) as connection:  # type: ignore[no-untyped-call]
            connection.ensure_connection(max_retries=1, interval_start=0, timeout=TIMEOUT_S)
            transport = str(connection.transport_cls)
    except Exception as error:  # as above
        return Check(ok=False, detail=f"unreachable ({type(error).__name__})")
    return Check(ok=True, detail=transport)


@router.get(
    "/healthz",
    response_model=Health,
    responses={503: {"model": Health, "description": "The database or the broker is down."}},
)
def healthz(response: Response, settings: SettingsDep) -> Health:
    """200 when the database and the broker both answer, 503 (same body) when either does not."""
    health = Health(
        status="ok",
        database=database_check(settings.database_url),
        broker=broker_check(settings.broker_url),
    )
    if not (health.database.ok and health.broker.ok):
        health = health.model_copy(update={"status": "unavailable"})
        response.status_code = 503
    return health
