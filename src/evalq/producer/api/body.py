"""Request bodies: a size limit before anything is read, and JSON decoded defensively.

Decoding refuses what no wire model can hold (not UTF-8, not JSON, NaN and infinities, nesting
deeper than any wire model); the rules on each field are the wire models' (`evalq.core.schemas`),
shared with `evalq submit` and the Python client.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evalq.core.errors import EvalqError
from evalq.core.storable import decode_json

JSON_TYPES = ("application/json",)


class BodyTooLarge(EvalqError):
    """The request body exceeds EVALQ_API_MAX_BODY_BYTES."""


class BodyLimit:
    """ASGI middleware: 413 when the body is larger than ``limit`` bytes.

    A declared Content-Length over the limit is refused before a byte is read; a chunked body is
    counted as it arrives and reading it raises `BodyTooLarge` once it passes the limit.
    """

    def __init__(self, app: ASGIApp, *, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await _refuse(send, self.limit)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise BodyTooLarge(too_large(self.limit))
            return message

        await self.app(scope, counted, send)


def too_large(limit: int) -> str:
    """The 413 message."""
    return f"request body exceeds {limit} bytes (EVALQ_API_MAX_BODY_BYTES)"


async def _refuse(send: Send, limit: int) -> None:
    body = json.dumps({"detail": too_large(limit)}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def is_json(content_type: str | None) -> bool:
    """True for ``application/json`` (any parameters, e.g. charset)."""
    if not content_type:
        return False
    media = content_type.split(";", 1)[0].strip().lower()
    return media in JSON_TYPES


def parse_json(raw: bytes) -> Any:
    """Decode a UTF-8 JSON body (`evalq.core.storable.decode_json`); problems name ``(body)``.

    Only the decoding happens here; every field's rules (strings the store can keep, integer
    ranges) are the wire models', so the CLI and the Python client apply the same ones.
    """
    return decode_json(raw, where="(body)")
