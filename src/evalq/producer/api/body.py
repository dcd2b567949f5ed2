"""Request bodies: a size limit before anything is read, and JSON decoded defensively.

Decoding refuses what no wire model can hold (not UTF-8, not JSON, NaN and infinities, nesting
deeper than any wire model); the rules on each field are the wire models' (`evalq.core.schemas`),
shared with `evalq submit` and the Python client.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evalq.core.errors import EvalqError, InvalidInput
from evalq.core.storable import decode_json

JSON_TYPES = ("application/json",)
PROTOBUF_TYPES = ("application/x-protobuf",)
NOT_GZIP = "Content-Encoding is gzip but the body is not whole gzip"


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


def media_type(content_type: str | None) -> str:
    """The media type of a Content-Type header, lowercase, without parameters."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def is_json(content_type: str | None) -> bool:
    """True for ``application/json`` (any parameters, e.g. charset)."""
    return media_type(content_type) in JSON_TYPES


def is_protobuf(content_type: str | None) -> bool:
    """True for ``application/x-protobuf``, the OTLP/HTTP binary encoding."""
    return media_type(content_type) in PROTOBUF_TYPES


def gunzip(raw: bytes, limit: int) -> bytes:
    """A gzip body (OTLP exporters may compress) inflated to at most ``limit`` bytes.

    Every member is read: gzip members written one after another are one valid gzip stream
    (``cat a.gz b.gz``), and the data after the first used to be dropped without a word.
    `BodyLimit` counted the compressed bytes; a small body can inflate a thousandfold, so the
    inflated size of all members together is held to the same limit (`BodyTooLarge`), never
    inflated further. Anything after the last member that is not gzip is refused.
    """
    data = bytearray()
    rest = raw
    while True:
        inflater = zlib.decompressobj(wbits=31)
        try:
            data += inflater.decompress(rest, limit + 1 - len(data))
        except zlib.error:
            raise InvalidInput([("(body)", NOT_GZIP)]) from None
        if len(data) > limit:
            raise BodyTooLarge(too_large(limit) + " once inflated")
        if not inflater.eof:
            raise InvalidInput([("(body)", NOT_GZIP)])
        rest = inflater.unused_data
        if not rest:
            return bytes(data)


def parse_json(raw: bytes) -> Any:
    """Decode a UTF-8 JSON body (`evalq.core.storable.decode_json`); problems name ``(body)``.

    Only the decoding happens here; every field's rules (strings the store can keep, integer
    ranges) are the wire models', so the CLI and the Python client apply the same ones.
    """
    return decode_json(raw, where="(body)")
