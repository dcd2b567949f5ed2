"""The fast path of live pages' polls: a 304 answered before routing.

A poll (``X-Evalq-Live`` with ``If-None-Match``) whose page has not changed needs no route, no
dependency resolution and no render: this ASGI middleware checks the session (`web.viewer_of`'s
short-lived cache) and the page's version (`freshness.version_of`), both in a worker thread, and
answers 304 itself. Anything else, a changed page included, goes on to the routes, which run the
same checks.
"""

from __future__ import annotations

import anyio
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from evalq.store.db import read_scope
from evalq.ui.web import checked_viewer, etag_of, settings_of


class LivePolls:
    """ASGI middleware: 304 for a live poll whose page has not changed."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET":
            request = Request(scope)
            wanted = request.headers.get("if-none-match")
            if wanted and request.headers.get("x-evalq-live"):
                etag = await anyio.to_thread.run_sync(_unchanged, request, wanted)
                if etag is not None:
                    headers = [(b"etag", etag.encode())]  # SecurityHeaders adds the CSP
                    await send({"type": "http.response.start", "status": 304, "headers": headers})
                    await send({"type": "http.response.body", "body": b""})
                    return
        await self.app(scope, receive, send)


def _unchanged(request: Request, wanted: str) -> str | None:
    """The page's ETag when it is still ``wanted`` and the session may read it; else None."""
    viewer = checked_viewer(request)
    if viewer is None or not viewer.can("read"):
        return None
    with read_scope(settings_of(request)) as session:  # where the page itself is read
        etag = etag_of(session, request, viewer)
    return etag if etag == wanted else None
