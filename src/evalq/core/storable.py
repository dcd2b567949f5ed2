"""Values the store can hold: JSON decoded strictly, and strings it can keep.

Every front door (the HTTP API, `evalq submit`, `evalq task put`, the Python client) reaches the
wire models through here, so a value is refused with the same field and rule whichever door it
came through. Decoding (bytes to UTF-8 to JSON, no NaN or infinities, bounded nesting) is
`decode_json`, over `json_text`: the one parse of JSON text a client wrote (span attributes
too, `evalq.traces.json_attributes`). The string rule is `storable_string`, which the wire
models' string types apply field by field. Integer ranges are the wire models' own bounds
(``le=MAX_COUNT``).
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic_core import PydanticCustomError

from evalq.core.errors import InvalidInput

MAX_INT = 2**31 - 1
"""Largest integer magnitude the store's INTEGER columns hold (32-bit on PostgreSQL)."""
MAX_DEPTH = 32
"""Deepest nesting of arrays and objects accepted (the wire models need fewer than 10)."""
NUL_RULE = "string must not contain NUL characters"
SURROGATE_RULE = "string must be valid Unicode (no lone surrogates)"
INT_RANGE_RULE = f"integer out of range (at most {MAX_INT} in magnitude)"
DEPTH_RULE = f"nested deeper than {MAX_DEPTH} levels"
UTF8_RULE = "must be UTF-8 encoded JSON"
SIZE_RULE = "JSON text too long"


class _Refused(ValueError):
    """A value the JSON parser's hooks refuse; its message is the rule as it stands."""


def string_rule(text: str) -> str | None:
    """The rule ``text`` breaks for the store (PostgreSQL text and JSONB), or None."""
    if "\x00" in text:
        return NUL_RULE
    if text.isascii():  # a flag of the string: no scan
        return None
    try:
        text.encode("utf-8")  # fails only on a surrogate; a C loop, unlike a regex search
    except UnicodeEncodeError:
        return SURROGATE_RULE
    return None


def storable_string(value: Any) -> Any:
    """Pydantic before-validator: ``value`` unchanged, or an error whose message is the rule.

    It runs before pydantic's own string check, which would refuse a lone surrogate as "unable
    to parse raw data as a unicode string"; anything but a string is left to that check.
    """
    rule = string_rule(value) if isinstance(value, str) else None
    if rule is not None:
        raise PydanticCustomError("storable_string", rule)
    return value


def storable_keys(data: Any) -> Any:
    """Pydantic before-validator of a model: ``data`` unchanged unless a key breaks a rule.

    An object key with a lone surrogate would otherwise be refused by pydantic for the whole
    object as "unable to parse raw data"; this names the rule instead.
    """
    if isinstance(data, dict):
        for key in data:
            rule = string_rule(key) if isinstance(key, str) else None
            if rule is not None:
                raise PydanticCustomError("storable_key", f"field name: {rule}")
    return data


def printable(text: str) -> str:
    """``text`` with NUL and lone surrogates escaped, for a field or rule in an error message.

    A field name can be a key the caller sent (an unknown field); echoed raw, a lone surrogate
    would break the UTF-8 encoding of the 422 body or of the terminal.
    """
    if string_rule(text) is None:
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")


def decode_json(raw: bytes, *, where: str) -> Any:
    """Decode UTF-8 JSON bytes, refusing what no wire model can hold.

    Refused, as `InvalidInput` on the field ``where`` (``(body)``, ``(line)``, ``(file)``):
    bytes that are not UTF-8, text that is not JSON, ``NaN`` / ``Infinity`` and numbers that
    overflow to infinity, integers of more digits than Python converts, and nesting deeper than
    `MAX_DEPTH`. Strings and integer ranges are left to the wire models, which name the field.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InvalidInput([(where, f"{UTF8_RULE} (bad byte at offset {error.start})")]) from None
    return json_text(text, where=where)


def json_text(text: str, *, where: str, max_chars: int | None = None) -> Any:
    """Parse JSON text, bounded: the one entry point for JSON a client wrote.

    Refused, as `InvalidInput` on the field ``where``: text longer than ``max_chars`` (checked
    before parsing), text that is not JSON, ``NaN`` / ``Infinity`` and numbers that overflow to
    infinity, integers of more digits than Python converts, and nesting deeper than
    `MAX_DEPTH` (the parser's own recursion limit is caught, never let out).
    """
    if max_chars is not None and len(text) > max_chars:
        raise InvalidInput(
            [(where, f"{SIZE_RULE}: {len(text):,} characters, at most {max_chars:,}")]
        )
    try:
        data = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except RecursionError:
        raise InvalidInput([(where, DEPTH_RULE)]) from None
    except _Refused as error:
        raise InvalidInput([(where, str(error))]) from None
    except json.JSONDecodeError as error:
        raise InvalidInput([(where, f"not valid JSON: {_located(error)}")]) from None
    except ValueError:  # int() refuses integers of more than 4300 digits
        raise InvalidInput([(where, INT_RANGE_RULE)]) from None
    if _too_deep(data):
        raise InvalidInput([(where, DEPTH_RULE)])
    return data


def _no_constant(name: str) -> Any:
    raise _Refused(f"not valid JSON: {name} is not allowed")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _Refused("number must be finite")
    return value


def _located(error: json.JSONDecodeError) -> str:
    if error.lineno == 1:
        return f"{error.msg} (column {error.colno})"
    return f"{error.msg} (line {error.lineno}, column {error.colno})"


def _too_deep(data: Any) -> bool:
    """True when arrays and objects nest deeper than `MAX_DEPTH` (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if not isinstance(value, dict | list):
            continue
        if depth >= MAX_DEPTH:
            return True
        items = value.values() if isinstance(value, dict) else value
        stack.extend((item, depth + 1) for item in items)
    return False
