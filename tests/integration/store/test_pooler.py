"""evalq through PgBouncer in transaction pooling mode (store/db.py, ``POOLER_SAFE``): clients
that share a server connection between their transactions do not trip over each other's
prepared statements. The rest of the store's tests run through it too (conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import func, select
from tests.support.databases import fresh_database

from evalq.store.db import engine_for
from evalq.store.models import TaskRow

pytestmark = pytest.mark.both_databases  # the database matters here (tests/conftest.py)


def test_two_clients_repeating_a_query_share_pgbouncer_s_server_connections(
    tmp_path: Path,
) -> None:
    """psycopg prepares a query on its sixth execution under a name of its own numbering
    (``_pg3_0``); two clients doing so on one server connection would collide (``already
    exists``), and a client moved to another server connection would miss it."""
    with fresh_database("pgbouncer", tmp_path) as url:
        engine = engine_for(url)
        with engine.connect() as first, engine.connect() as second:
            for _ in range(12):
                for client in (first, second):
                    with client.begin():
                        assert client.scalar(select(func.count()).select_from(TaskRow)) == 0
