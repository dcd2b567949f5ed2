"""A submission's free-form metadata: a small JSON object a team attaches (run id, git sha...).

evalq never scores it; it is stored with the submission, returned with its result, and a
leaderboard can keep only the rows whose metadata holds given ``key=value`` pairs. The limits
below are part of the public contract (docs/submissions.md, 'Metadata'): they keep one
submission's metadata small enough that storing, hashing and filtering on it costs nothing.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from pydantic_core import PydanticCustomError

from evalq.core.storable import printable, string_rule

MAX_KEYS = 32
"""Most keys in the metadata object, and in any object nested in it."""
MAX_KEY_CHARS = 64
"""Longest key, at any level."""
MAX_DEPTH = 3
"""Deepest nesting: ``{"a": {"b": {"c": 1}}}`` is 3 levels (the metadata object counts as 1)."""
MAX_BYTES = 4096
"""Largest metadata, as compact UTF-8 JSON."""
MAX_FILTER_VALUE_CHARS = 200
"""Longest value a leaderboard filter compares against."""
KEY_PATTERN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")
"""Letters, digits, ``_``, ``.`` and ``-``: a key reads the same in a URL and on a command line."""
KEY_RULE = (
    f"a metadata key is 1 to {MAX_KEY_CHARS} letters, digits, '_', '.' or '-' "
    "(not starting with '.' or '-')"
)


def check_metadata(value: Any) -> Any:
    """Pydantic before-validator: ``value`` unchanged when it keeps every metadata limit.

    Anything but an object is left to pydantic's own type check. The rule names the offending
    key path (``run.config.x``), since pydantic reports it on ``metadata`` as a whole.
    """
    if not isinstance(value, dict):
        return value
    _check_object(value, path="", depth=1)
    try:
        size = len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())
    except (TypeError, ValueError):  # checked above; defensive against exotic subclasses
        raise PydanticCustomError("metadata", "metadata must be JSON") from None
    if size > MAX_BYTES:
        raise PydanticCustomError(
            "metadata", f"metadata is {size} bytes as JSON; at most {MAX_BYTES}"
        )
    return value


def _check_object(value: dict[Any, Any], *, path: str, depth: int) -> None:
    if len(value) > MAX_KEYS:
        where = f"{path}: " if path else ""
        raise PydanticCustomError("metadata", f"{where}{len(value)} keys; at most {MAX_KEYS}")
    for key, item in value.items():
        if not isinstance(key, str) or not valid_key(key):
            shown = printable(str(key))[:80]
            raise PydanticCustomError("metadata", f"key {shown!r}: {KEY_RULE}")
        _check_value(item, path=f"{path}.{key}" if path else key, depth=depth)


def _check_value(value: Any, *, path: str, depth: int) -> None:
    if isinstance(value, dict | list):
        if depth >= MAX_DEPTH:
            raise PydanticCustomError("metadata", f"{path}: nested deeper than {MAX_DEPTH} levels")
        if isinstance(value, dict):
            _check_object(value, path=path, depth=depth + 1)
        else:
            for index, item in enumerate(value):
                _check_value(item, path=f"{path}.{index}", depth=depth + 1)
    elif isinstance(value, str):
        rule = string_rule(value)
        if rule is not None:
            raise PydanticCustomError("metadata", f"{path}: {rule}")
    elif isinstance(value, float) and not math.isfinite(value):
        raise PydanticCustomError("metadata", f"{path}: number must be finite")
    elif value is not None and not isinstance(value, bool | int | float):
        raise PydanticCustomError(
            "metadata", f"{path}: must be a string, number, boolean, null, list or object"
        )


def valid_key(key: str) -> bool:
    """True when ``key`` may name a metadata entry (or a leaderboard filter on one)."""
    return len(key) <= MAX_KEY_CHARS and KEY_PATTERN.match(key) is not None


def as_text(value: Any) -> str | None:
    """The string a filter compares a metadata value with; None for a list or an object.

    A string is itself; a number, boolean or null is its JSON form (``3``, ``2.5``, ``true``,
    ``null``), so ``--where attempt=3`` matches ``{"attempt": 3}`` and ``{"attempt": "3"}``.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        return None
    return json.dumps(value)


def matches(metadata: Mapping[str, Any], wanted: Mapping[str, str]) -> bool:
    """True when every ``key=value`` of ``wanted`` is in ``metadata`` (exact, as strings)."""
    return all(key in metadata and as_text(metadata[key]) == value for key, value in wanted.items())


def filter_problems(wanted: Mapping[str, str]) -> list[tuple[str, str]]:
    """``(metadata.KEY, rule)`` for each filter that can never name a metadata entry."""
    problems = []
    for key, value in wanted.items():
        if not valid_key(key):
            problems.append((f"metadata.{key[:80]}", KEY_RULE))
        elif len(value) > MAX_FILTER_VALUE_CHARS:
            problems.append((f"metadata.{key}", f"at most {MAX_FILTER_VALUE_CHARS} characters"))
    return problems


IMPORTED_SCORE = "imported_score"
"""Metadata key of the score another tool gave an imported run, kept as the tool wrote it
(docs/importers.md): boards show it beside evalq's, never rank on it."""
IMPORTED_GRADER = "imported_grader"
"""Metadata key naming what gave `IMPORTED_SCORE` (the tool, and its scorer where it has one)."""
