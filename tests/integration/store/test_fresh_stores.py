"""The stores tests get are copies of one migrated template (tests/support/databases.py): each is
at the newest migration, and what one test writes no other store sees."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import func, select
from tests.integration.store.conftest import BACKENDS
from tests.support.databases import fresh_database, migrate_store, migrated_template

from evalq.core.schemas import Task
from evalq.store import queries
from evalq.store.db import is_current, session_scope
from evalq.store.models import TaskRow

pytestmark = pytest.mark.both_databases  # the database matters here (tests/conftest.py)


def tasks_in(url: str) -> int:
    with session_scope(url) as session:
        return int(session.scalar(select(func.count()).select_from(TaskRow)) or 0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_copies_of_the_template_are_current_and_apart(backend: str, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with (
        fresh_database(backend, tmp_path / "a") as first,
        fresh_database(backend, tmp_path / "b") as second,
    ):
        assert first != second
        assert is_current(first) and is_current(second)
        with session_scope(first) as session:
            queries.put_task(session, task=Task(id="only-here", category="debugging"))
        assert (tasks_in(first), tasks_in(second)) == (1, 0)
    assert migrated_template(backend) == migrated_template(backend)  # made once per process
    with fresh_database(backend, tmp_path) as third:
        assert tasks_in(third) == 0  # the template itself was never written to


def test_a_new_sqlite_file_is_copied_and_an_existing_store_is_migrated(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'new.db'}"
    migrate_store(url)
    assert is_current(url)
    with session_scope(url) as session:
        queries.put_task(session, task=Task(id="kept", category="debugging"))
    migrate_store(url)  # already there: migrated in place (a no-op at head), never replaced
    assert tasks_in(url) == 1
