"""GET /healthz: is the database reachable, is the broker reachable. No key needed."""

from __future__ import annotations

from fastapi import APIRouter, Response

from evalq.producer.api.deps import SettingsDep
from evalq.producer.api.health_checks import health_of
from evalq.producer.api.models import Health

router = APIRouter(tags=["health"])


@router.get(
    "/healthz",
    response_model=Health,
    responses={503: {"model": Health, "description": "The database or the broker is down."}},
)
def healthz(response: Response, settings: SettingsDep) -> Health:
    """200 when the database and the broker both answer, 503 (same body) when either does not."""
    health = health_of(settings)
    if health.status != "ok":
        response.status_code = 503
    return health
