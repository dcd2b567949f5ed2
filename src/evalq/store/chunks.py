"""Long lists of values asked for in pieces: one ``IN (...)`` per `CHUNK` of them.

Every query that binds a caller's list of ids, tasks or agents splits it here, so the bound on
one statement's parameters is set in one place.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

CHUNK = 500
"""Values bound in one ``IN (...)``: below SQLite's oldest default limit on bound parameters
(999), with room for the statement's own; PostgreSQL would take more, and gains little from it."""

T = TypeVar("T")


def chunks(values: Sequence[T]) -> Iterator[list[T]]:
    """``values`` in order, `CHUNK` at a time (none for an empty sequence)."""
    for start in range(0, len(values), CHUNK):
        yield list(values[start : start + CHUNK])
