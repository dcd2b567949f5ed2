"""PostgreSQL backup and restore as docs/deploy.md tells a team to do it: `pg_dump -Fc` of a
store holding the bundled examples, `pg_restore` into a new, empty database, and every board
read from the copy equal to the original's."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from tests.support.databases import fresh_database
from tests.support.processes import PATIENCE
from tests.support.services import PG_ADMIN_URL
from tests.support.settings import configure
from tests.support.tools import required_program

from evalq.core.schemas import Submission
from evalq.producer.cli import EXAMPLES
from evalq.producer.files import read_jsonl, read_tasks
from evalq.read.leaderboard import leaderboard
from evalq.service.client import Client
from evalq.store.db import session_scope
from evalq.workers.bootstrap import worker_app
from evalq.workers.embedded import embedded_worker

pytestmark = [pytest.mark.both_databases, pytest.mark.timeout(900)]  # PostgreSQL only: pg_dump


def libpq(url: str) -> str:
    """A SQLAlchemy URL as pg_dump and pg_restore take it."""
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[str]:
    """A PostgreSQL store with every bundled example evaluated in-process, as `evalq demo`."""
    with fresh_database("postgresql", tmp_path) as url, pytest.MonkeyPatch.context() as patch:
        patch.delenv("EVALQ_BROKER_URL", raising=False)
        patch.delenv("EVALQ_JUDGE_MODEL", raising=False)
        configure(patch, database_url=url)
        submissions: list[Submission] = []
        for path in sorted(EXAMPLES.glob("*.jsonl")):
            good, bad = read_jsonl(path)
            assert not bad
            submissions += [submission for _, submission in good]
        client = Client(app=worker_app())
        with embedded_worker(client.app):
            for task in read_tasks(EXAMPLES / "tasks.json"):
                client.put_task(task)
            ids = [r.id for r in client.submit_many(submissions)]
            assert set(client.wait(ids, timeout=600 * PATIENCE).values()) == {"done"}
        client.app.close()
        yield url
    configure(pytest.MonkeyPatch())


@pytest.fixture
def empty_database() -> Iterator[str]:
    """A new database with nothing in it (as a fresh server's), dropped afterwards."""
    name = f"evalq_restore_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    try:
        yield url
    finally:
        sa.create_engine(url).dispose()
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def boards(url: str) -> dict[str, object]:
    """Every task's board as the read side serves it."""
    with session_scope(url) as session:
        tasks = [t.id for t in read_tasks(EXAMPLES / "tasks.json")]
        return {task: leaderboard(session, task_id=task).model_dump(mode="json") for task in tasks}


def test_a_store_dumped_and_restored_into_a_new_database_serves_the_same_boards(
    store: str, empty_database: str, tmp_path: Path
) -> None:
    dump = tmp_path / "evalq.dump"
    pg_dump = required_program("pg_dump", "apt-get install postgresql-client")
    pg_restore = required_program("pg_restore", "apt-get install postgresql-client")
    done = subprocess.run(
        [pg_dump, "--format=custom", "--no-owner", f"--file={dump}", libpq(store)],
        capture_output=True,
        text=True,
        timeout=300 * PATIENCE,
    )
    assert done.returncode == 0, done.stderr
    done = subprocess.run(
        [pg_restore, "--no-owner", "--exit-on-error", f"--dbname={libpq(empty_database)}", dump],
        capture_output=True,
        text=True,
        timeout=300 * PATIENCE,
    )
    assert done.returncode == 0, done.stderr
    original = boards(store)
    assert all(board["entries"] for board in original.values())  # type: ignore[index]
    assert boards(empty_database) == original
    with session_scope(empty_database) as session:  # the schema's version came along
        version = session.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
    with session_scope(store) as session:
        assert (
            version == session.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
        )
