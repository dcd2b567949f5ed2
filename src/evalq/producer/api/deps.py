"""Dependencies the routes share: the Client, the settings, a parsed JSON body, path ids."""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request

from evalq.core.errors import NotFound
from evalq.core.settings import Settings
from evalq.producer.api.body import is_json, parse_json
from evalq.producer.client import Client

IDENTIFIER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:\-/]*")


def client_of(request: Request) -> Client:
    """The app's `Client` (one per app: one Celery producer pool)."""
    client: Client = request.app.state.client
    return client


def settings_of(request: Request) -> Settings:
    """The app's Settings."""
    settings: Settings = request.app.state.settings
    return settings


async def json_body(request: Request) -> Any:
    """The request body as JSON: 415 unless it is application/json, 422 when it is not valid."""
    if not is_json(request.headers.get("content-type")):
        raise HTTPException(415, "Content-Type must be application/json")
    return parse_json(await request.body())


def known(kind: str, value: str) -> str:
    """``value`` if it can name a stored ``kind``; `NotFound` otherwise (no query is run)."""
    if len(value) > 128 or not IDENTIFIER.fullmatch(value):
        raise NotFound(f"{kind} {value!r} does not exist")
    return value


SettingsDep = Annotated[Settings, Depends(settings_of)]
ClientDep = Annotated[Client, Depends(client_of)]
JsonBody = Annotated[Any, Depends(json_body)]
