"""Reading fields of a decoded JSON document, each problem named by its JSON path."""

from __future__ import annotations

from typing import Any

from evalq.core.errors import InvalidInput


def at(value: Any, where: str, expected: type | tuple[type, ...], what: str) -> Any:
    """``value`` if it is of type ``expected``.

    Raises:
        InvalidInput: it is not; the problem is named ``where`` and says ``what`` was expected.
    """
    if isinstance(value, bool) and bool not in (
        expected if isinstance(expected, tuple) else (expected,)
    ):
        raise InvalidInput([(where, f"must be {what}")])
    if not isinstance(value, expected):
        raise InvalidInput([(where, f"must be {what}")])
    return value


def child(where: str, name: str) -> str:
    """The path of ``name`` (a key, or an index such as ``[2]``) inside ``where``.

    ``where`` is a JSON path (``samples[0]``), empty for the document itself, or a JSON Lines
    record's ``line N:`` (its members are then ``line N: key``).
    """
    if not where:
        return name.removeprefix(".")
    if where.endswith(":"):
        return f"{where} {name}"
    return f"{where}{name}" if name.startswith("[") else f"{where}.{name}"


def member(
    document: dict[str, Any], key: str, where: str, expected: type | tuple[type, ...], what: str
) -> Any:
    """``document[key]``, present and of type ``expected``; named ``where.key`` if not."""
    path = child(where, key)
    if key not in document:
        raise InvalidInput([(path, f"missing: must be {what}")])
    return at(document[key], path, expected, what)


def optional(
    document: dict[str, Any], key: str, where: str, expected: type | tuple[type, ...], what: str
) -> Any:
    """``document[key]`` if present and not null (of type ``expected``), else None."""
    value = document.get(key)
    if value is None:
        return None
    return at(value, child(where, key), expected, what)
