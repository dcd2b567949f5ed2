"""INSERT ... ON CONFLICT DO UPDATE for SQLite and PostgreSQL: the one upsert every writer uses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session


def upsert(
    session: Session,
    table: Table,
    *,
    values: Mapping[str, Any],
    keys: Sequence[str],
    update: Mapping[str, Any],
) -> None:
    """Insert ``values`` or, when a row with the same ``keys`` exists, apply ``update`` to it.

    ``update`` values may be SQL expressions over the existing row (e.g. ``table.c.n + 1``).
    Atomic in the database, so concurrent writers never create duplicates.
    """
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        pg = postgresql.insert(table).values(**values)
        session.execute(pg.on_conflict_do_update(index_elements=list(keys), set_=dict(update)))
    elif dialect == "sqlite":
        lite = sqlite.insert(table).values(**values)
        session.execute(lite.on_conflict_do_update(index_elements=list(keys), set_=dict(update)))
    else:  # pragma: no cover - evalq supports SQLite and PostgreSQL
        raise NotImplementedError(f"upsert is not implemented for {dialect}")
