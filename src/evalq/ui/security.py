"""Security headers of every UI response (a strict Content-Security-Policy and its companions,
and ``Cache-Control``), and the origin check of the sign-in form.

The policy allows this site's own script and style files and nothing inline: no inline script,
no ``eval``, no inline style, no frame, no form posting elsewhere. A string that escaped
escaping still could not run.

Every UI response says how it may be cached, whoever answered it: a page, the 304 of a live poll
answered before routing (`evalq.ui.polls`), a 404 of a path no route serves, a static file. A
response that sets its own ``Cache-Control`` (the event stream) keeps it; any other gets
`CACHE_CONTROL`: a shared cache keeps nothing (a page shows what one key may read), the browser
asks again each time (the ETag makes that a 304).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
CACHE_CONTROL = "no-cache, private"
HEADERS = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
)


def _host(netloc: str) -> str:
    """``netloc`` lower-cased, without a default port (``:80``, ``:443``)."""
    host = netloc.lower()
    for default in (":80", ":443"):
        host = host.removesuffix(default)
    return host


def posted_from_here(headers: Headers) -> bool:
    """Whether a form post comes from a page of this site: its ``Origin`` (a browser sends one
    with every POST), or without one its ``Referer``, names the host the post was sent to.

    The scheme is left out (behind a proxy that ends TLS the server sees http while the page was
    https); the host and port must match, so another site, a sibling subdomain that could toss a
    cookie, or an opaque ``null`` origin is refused. A post naming neither (not a browser's)
    passes here: the form's token still has to match.
    """
    source = headers.get("origin") or headers.get("referer")
    if source is None:
        return True
    parts = urlsplit(source)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return False
    return _host(parts.netloc) == _host(headers.get("host", ""))


def is_ui(path: str) -> bool:
    """Whether ``path`` is a page or asset of the UI (the API's routes keep their headers)."""
    return path == "/" or path.startswith("/ui/")


class SecurityHeaders:
    """ASGI middleware adding `HEADERS`, and `CACHE_CONTROL` unless one is set, to every UI
    response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_ui(scope["path"]):
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if not any(name.lower() == b"cache-control" for name, _ in headers):
                    headers.append((b"cache-control", CACHE_CONTROL.encode()))
                message["headers"] = [*headers, *HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)
