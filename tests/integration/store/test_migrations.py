"""A SQLite store migrates on its first session only when it is behind: the newest revision is
read from the migration files without Alembic, and must be Alembic's own answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic import command
from alembic.script import ScriptDirectory

from evalq.store.db import engine_for, head_revisions, is_current, migrations_config, session_scope

pytestmark = pytest.mark.both_databases  # the database matters here (tests/conftest.py)


def test_the_head_read_from_the_files_is_alembic_s() -> None:
    script = ScriptDirectory.from_config(migrations_config())
    assert head_revisions() == frozenset(script.get_heads())


def test_a_store_behind_is_migrated_on_first_use_and_a_current_one_is_left_alone(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'behind.db'}"
    (previous,) = {
        script.down_revision
        for script in ScriptDirectory.from_config(migrations_config()).walk_revisions()
        if script.revision in head_revisions()
    }
    engine = engine_for(url)
    with engine.begin() as connection:
        config = migrations_config()
        config.attributes["connection"] = connection
        command.upgrade(config, str(previous))
    assert not is_current(url)
    with session_scope(url):
        pass
    assert is_current(url)


def test_an_empty_database_is_not_current(tmp_path: Path) -> None:
    assert not is_current(f"sqlite:///{tmp_path / 'empty.db'}")
