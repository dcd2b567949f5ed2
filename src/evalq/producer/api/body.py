"""Request bodies: a size limit before anything is read, and JSON parsed defensively.

The JSON parser is the standard library's, plus the checks that keep a value the store cannot
hold from ever reaching it: NaN and infinities, integers wider than the store's columns, strings
with NUL characters or lone surrogates, and nesting deeper than any wire model.
"""

from __future__ import annotations

import json
import math
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evalq.core.errors import EvalqError, InvalidInput

MAX_INT = 2**31 - 1
"""Largest integer accepted anywhere in a body (the store's INTEGER columns are 32-bit)."""
MAX_DEPTH = 32
"""Deepest nesting of arrays and objects accepted (the wire models need fewer than 10)."""
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


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not allowed")


def parse_json(raw: bytes) -> Any:
    """Decode a UTF-8 JSON body and check every value; `InvalidInput` names what is wrong."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput([("(body)", "must be UTF-8 encoded JSON")]) from None
    try:
        data = json.loads(text, parse_constant=_no_constants)
    except RecursionError:
        raise InvalidInput([("(body)", f"nested deeper than {MAX_DEPTH} levels")]) from None
    except ValueError as error:  # JSONDecodeError, NaN/Infinity, integers of > 4300 digits
        rule = error.msg if isinstance(error, json.JSONDecodeError) else str(error)
        if "integer string conversion" in rule:
            rule = f"integer out of range (at most {MAX_INT} in magnitude)"
        raise InvalidInput([("(body)", f"not valid JSON: {rule}")]) from None
    problems = check_values(data)
    if problems:
        raise InvalidInput(problems)
    return data


def check_values(data: Any) -> list[tuple[str, str]]:
    """Problems of values the store cannot hold, each named by its dotted path (first 20)."""
    problems: list[tuple[str, str]] = []
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    while stack and len(problems) < 20:
        value, path, depth = stack.pop()
        where = path or "(body)"
        if isinstance(value, dict | list) and depth >= MAX_DEPTH:
            problems.append((where, f"nested deeper than {MAX_DEPTH} levels"))
        elif isinstance(value, dict):
            for key, item in value.items():
                rule = _string_rule(key)
                if rule:
                    problems.append((f"{path}.(key)" if path else "(key)", rule))
                else:
                    stack.append((item, f"{path}.{key}" if path else key, depth + 1))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                stack.append((item, f"{path}.{i}" if path else str(i), depth + 1))
        elif isinstance(value, bool):
            continue
        elif isinstance(value, int) and not -MAX_INT <= value <= MAX_INT:
            problems.append((where, f"integer out of range (at most {MAX_INT} in magnitude)"))
        elif isinstance(value, float) and not math.isfinite(value):
            problems.append((where, "number must be finite"))
        elif isinstance(value, str):
            rule = _string_rule(value)
            if rule:
                problems.append((where, rule))
    return problems


def _string_rule(text: str) -> str | None:
    if "\x00" in text:
        return "string must not contain NUL characters"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "string must be valid Unicode (no lone surrogates)"
    return None
