"""``EVALQ_READ_DATABASE_URL`` names a PostgreSQL streaming replica, or nothing."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from evalq.core.settings import Settings

PRIMARY = "postgresql+psycopg://evalq@primary/evalq"


@pytest.mark.parametrize("unset", [{}, {"read_database_url": ""}])
def test_unset_or_empty_every_read_goes_to_the_store(unset: dict[str, str]) -> None:
    assert Settings(database_url=PRIMARY, **unset).read_database_url is None


def test_a_replica_url_is_kept() -> None:
    replica = "postgresql+psycopg://evalq@replica/evalq"
    assert Settings(database_url=PRIMARY, read_database_url=replica).read_database_url == replica


@pytest.mark.parametrize("url", ["sqlite:///copy.db", "mysql://replica/evalq"])
def test_anything_but_postgresql_is_refused_naming_the_setting(url: str) -> None:
    with pytest.raises(ValidationError, match="read_database_url") as refused:
        Settings(database_url=PRIMARY, read_database_url=url)
    assert "must be a PostgreSQL URL" in str(refused.value)
