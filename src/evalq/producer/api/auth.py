"""API-key authentication: ``Authorization: Bearer <key>``, scopes ``read`` and ``write``.

Every route but ``/healthz`` depends on `require`. The check runs before the body is read, so a
request without the right key changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from evalq.store.db import session_scope
from evalq.store.keys import ApiKey, Scope, authenticate

bearer = HTTPBearer(auto_error=False, description="An evalq API key (`evalq keys create`).")
CHALLENGE = {"WWW-Authenticate": "Bearer"}


def require(scope: Scope) -> Callable[..., ApiKey]:
    """A dependency that admits a live key holding ``scope`` (401 without one, 403 without it)."""

    def check(
        request: Request,
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    ) -> ApiKey:
        if credentials is None:
            raise HTTPException(401, "missing API key (Authorization: Bearer <key>)", CHALLENGE)
        url: str = request.app.state.settings.database_url
        with session_scope(url) as session:
            key = authenticate(session, key=credentials.credentials)
        if key is None:
            raise HTTPException(401, "invalid or revoked API key", CHALLENGE)
        if scope not in key.scopes:
            raise HTTPException(403, f"this API key lacks the {scope!r} scope")
        return key

    return check
