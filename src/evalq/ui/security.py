"""Security headers of every UI response: a strict Content-Security-Policy and its companions.

The policy allows this site's own script and style files and nothing inline: no inline script,
no ``eval``, no inline style, no frame, no form posting elsewhere. A string that escaped
escaping still could not run.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
)


def is_ui(path: str) -> bool:
    """Whether ``path`` is a page or asset of the UI (the API's routes keep their headers)."""
    return path == "/" or path.startswith("/ui/")


class SecurityHeaders:
    """ASGI middleware adding `HEADERS` to every UI response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_ui(scope["path"]):
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)
