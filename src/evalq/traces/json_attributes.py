"""Span attributes that carry JSON text, parsed within bounds.

Some GenAI attributes are JSON written by the client (``gen_ai.tool.call.arguments``,
``gen_ai.output.messages``). They are parsed only through `attribute_json`, which bounds the
text's length and its nesting (`evalq.core.storable.json_text`), so a hostile value is a
refusal naming the span and the attribute, never an error that stops the trace sweep.
"""

from __future__ import annotations

from typing import Any

from evalq.core.errors import InvalidInput
from evalq.core.storable import DEPTH_RULE, SIZE_RULE, json_text

MAX_ATTRIBUTE_JSON_CHARS = 1_048_576
"""Longest JSON text parsed from one attribute (the body itself is at most 5 MiB)."""


def attribute_json(text: str, where: str) -> Any:
    """The JSON value of an attribute's text; `InvalidInput` on ``where`` when it is not JSON
    or passes the bounds (longer than `MAX_ATTRIBUTE_JSON_CHARS`, deeper than the store's
    nesting limit)."""
    return json_text(text, where=where, max_chars=MAX_ATTRIBUTE_JSON_CHARS)


def over_bounds(error: InvalidInput) -> bool:
    """Was ``error`` a bound (length or nesting) rather than text that is not JSON?"""
    return any(rule == DEPTH_RULE or rule.startswith(SIZE_RULE) for _, rule in error.problems)
