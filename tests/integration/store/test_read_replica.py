"""Reads that tolerate lag go to a real PostgreSQL streaming replica (``EVALQ_READ_DATABASE_URL``,
`evalq.store.db.read_scope`); a submitter's read of its own run stays on the primary.

The pair is the test's own (tests/support/replica.py: `initdb`, `pg_basebackup -R`), never the
shared cluster. Replay is paused on the replica (`pg_wal_replay_pause`) to make it lag on
purpose, and resumed to let it catch up.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from tests.integration.store.test_standings import example, store_task
from tests.support.processes import wait_until
from tests.support.replica import Pair, streaming_pair

from evalq.core.errors import NotFound
from evalq.core.settings import Settings
from evalq.read import served
from evalq.read.boards.query import BoardQuery
from evalq.service.client import Client
from evalq.store.db import engine_for, read_scope, session_scope, upgrade
from evalq.ui.events import shared_version
from evalq.ui.freshness import version_of

pytestmark = [pytest.mark.slow, pytest.mark.both_databases]  # two servers of its own

DATABASE = "evalq"


@pytest.fixture(scope="module")
def pair() -> Iterator[Pair]:
    with streaming_pair() as made:
        primary = made.url(made.primary_port, "postgres")
        admin = sa.create_engine(primary, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(sa.text(f"CREATE DATABASE {DATABASE}"))
        admin.dispose()
        upgrade(made.url(made.primary_port, DATABASE))
        yield made
        for port in (made.primary_port, made.replica_port):
            engine_for(made.url(port, DATABASE)).dispose()


@pytest.fixture
def settings(pair: Pair, redis_url: str) -> Settings:
    """The store on the primary, its replica for reads, a real broker no worker consumes."""
    return Settings(
        database_url=pair.url(pair.primary_port, DATABASE),
        read_database_url=pair.url(pair.replica_port, DATABASE),
        broker_url=redis_url,
        result_backend=redis_url,
    )


def caught_up(settings: Settings) -> bool:
    """True when the replica has replayed everything the primary has written."""
    assert settings.read_database_url is not None
    with engine_for(settings.database_url).connect() as primary:
        written = primary.scalar(sa.text("SELECT pg_current_wal_lsn()"))
    with engine_for(settings.read_database_url).connect() as replica:
        behind = replica.scalar(
            sa.text("SELECT pg_wal_lsn_diff(:written, pg_last_wal_replay_lsn())"),
            {"written": written},
        )
    return behind is not None and behind <= 0


def replay(settings: Settings, action: str) -> None:
    """Pause or resume WAL replay on the replica."""
    assert settings.read_database_url is not None
    with engine_for(settings.read_database_url).connect() as replica:
        replica.execute(sa.text(f"SELECT pg_wal_replay_{action}()"))
        replica.commit()


def test_boards_read_from_the_replica_equal_the_primary_s_once_caught_up(
    settings: Settings,
) -> None:
    store_task(settings.database_url, "arena", "replicated", random.Random(50), 40)
    with session_scope(settings.database_url) as session:
        served.refresh_task(session, task_id="replicated", settings=settings)
        on_primary = served.board(session, BoardQuery(task_id="replicated"), settings=settings)
        counted = (e for e in on_primary.entries if not (e.held or e.partial))
        tools = sorted({e.tool for e in counted if e.ranking_value is not None})
        compared_on_primary = served.comparison(
            session, tasks="replicated", by="tool", values=tools, settings=settings
        )
    wait_until(lambda: caught_up(settings), timeout=60, what="the replica to catch up")
    client = Client(settings)
    board = client.leaderboard("replicated")
    assert board.pop("replica_lag_s") == 0.0  # said on the board; caught up: nothing behind
    assert board == on_primary.model_dump(mode="json")
    assert "replica_lag_s" not in on_primary.model_dump(mode="json")  # the primary's: no lag
    assert client.compare("replicated", by="tool", values=tools) == compared_on_primary.model_dump(
        mode="json"
    )
    refused = pytest.raises(sa.exc.InternalError, match="read-only transaction")
    with read_scope(settings) as session, refused:  # it really is the replica: no writes
        session.execute(sa.text("CREATE TABLE written_on_a_replica (id int)"))


def test_a_submitter_reads_its_own_run_at_once_while_the_replica_lags(
    settings: Settings,
) -> None:
    store_task(settings.database_url, "arena", "lagging", random.Random(51), 5)
    wait_until(lambda: caught_up(settings), timeout=60, what="the replica to catch up")
    replay(settings, "pause")
    try:
        client = Client(settings)
        _, line = example("arena")
        usage = line["usage"] | {
            "input_tokens": 9_000,
            "output_tokens": 3_345,
            "total_tokens": 12_345,
        }
        mine = line | {"id": "mine-at-once", "task_id": "lagging", "usage": usage}  # no copy
        sent = client.submit(mine)
        assert sent.id == "mine-at-once"
        status = client.status("mine-at-once")  # read-your-writes: from the primary
        assert status in ("queued", "done")  # done at intake when it has no tier to fan out
        assert client.get_result("mine-at-once")["status"] == status
        with read_scope(settings) as session, pytest.raises(NotFound):  # not there yet
            served.run_result(session, submission_id="mine-at-once", settings=settings)
        store_task(settings.database_url, "arena", "lagging-new", random.Random(52), 3)
        with pytest.raises(NotFound):  # a board read from the replica: behind, and says so
            client.leaderboard("lagging-new")
        lag = client.leaderboard("lagging")["replica_lag_s"]
        assert lag > 0
        # the UI's live pages learn of changes where they read them: a version from the
        # primary would reload a page to what the replica still has, and never again
        page = "/ui/tasks/lagging-new"
        with read_scope(settings) as replica, session_scope(settings.database_url) as primary:
            behind, ahead = version_of(replica, page), version_of(primary, page)
        assert behind != ahead
        assert shared_version(settings, page) == behind
    finally:
        replay(settings, "resume")
    wait_until(lambda: caught_up(settings), timeout=60, what="the replica to catch up")
    with read_scope(settings) as session:
        assert served.run_result(session, submission_id="mine-at-once", settings=settings)
    assert client.leaderboard("lagging-new")["replica_lag_s"] == 0.0
    client.app.close()
