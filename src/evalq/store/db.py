"""Engines, sessions and migrations.

Alembic is imported only to migrate: a process whose SQLite store is already current (every
command after the first) never loads it (`_factory`).
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event, inspect, make_url, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from evalq.core.settings import Settings, get_settings

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = Path(__file__).parent / "migrations" / "versions"

_relaxed = threading.Event()


def relax_durability() -> None:
    """Let this process's commits return before they reach the disk (workers only).

    A worker commits twice per tier (claim, result) and once per merge; waiting for the disk
    on each was most of a tier's bookkeeping (2.6 ms per SQLite commit on the development
    machine). Relaxed, a commit survives the process being killed (SQLite's WAL is in the OS's
    page cache; PostgreSQL's server has it) and only an OS crash or power loss can lose the last
    commits, never corrupting the store. What a worker wrote is always recomputable: a lost claim
    or result leaves its submission unfinished and the recovery sweep sends it again. Producers
    keep full durability: a submission acknowledged to its sender is on disk.

    Applies to SQLite connections opened after the call (``synchronous=NORMAL``) and to
    PostgreSQL transactions begun after it (``SET LOCAL synchronous_commit TO off``).
    """
    _relaxed.set()


@lru_cache(maxsize=8)
def engine_for(url: str) -> Engine:
    """One engine per database URL and process; SQLite gets WAL and a busy timeout."""
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.execute("PRAGMA foreign_keys=ON")
            if _relaxed.is_set():
                cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        return engine
    psycopg = make_url(url).get_driver_name() == "psycopg"
    engine = create_engine(
        url,
        pool_pre_ping=True,
        pool_size=5,
        max_overflow=10,
        connect_args=POOLER_SAFE if psycopg else {},
    )
    if engine.dialect.name != "postgresql":
        return engine

    @event.listens_for(engine, "begin")
    def _postgres_commit(connection: Connection) -> None:
        if _relaxed.is_set():
            connection.exec_driver_sql("SET LOCAL synchronous_commit TO off")

    return engine


POOLER_SAFE: dict[str, Any] = {"prepare_threshold": None}
"""How evalq talks to PostgreSQL so that it works the same through PgBouncer in transaction
pooling mode (docs/deploy.md, "PgBouncer"), where each transaction may run on another server
connection shared with other clients:

- no server-side prepared statements (psycopg 3 prepares a query after its fifth execution, by
  a name another client's statement may already hold on that server connection; Debian's
  PgBouncer 1.18 predates its ``max_prepared_statements``);
- no session state: a worker's relaxed durability is ``SET LOCAL`` in each transaction (a
  session ``SET`` would stay on the server connection and reach a producer's commits);
- no advisory locks, ``LISTEN`` or temporary tables (evalq uses none: row locks and upserts).

The same on a direct connection; what is lost is psycopg's plan reuse for repeated queries.
"""


def commit_durability(session: Session) -> str:
    """How this session's commits reach the disk: SQLite ``synchronous`` or PostgreSQL
    ``synchronous_commit``, as the database reports it (for tests and diagnostics)."""
    if session.get_bind().dialect.name == "sqlite":
        return {0: "off", 1: "normal", 2: "full", 3: "extra"}[
            int(session.execute(text("PRAGMA synchronous")).scalar_one())
        ]
    return str(session.execute(text("SHOW synchronous_commit")).scalar_one())


def migrations_config() -> Config:
    """Alembic configuration pointing at the migrations shipped inside the package."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", "evalq.store:migrations")
    return config


def upgrade(url: str) -> None:
    """Apply every migration to the database at ``url`` (`evalq db upgrade`)."""
    from alembic import command

    engine = engine_for(url)
    with engine.begin() as connection:
        config = migrations_config()
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


@lru_cache(maxsize=1)
def head_revisions() -> frozenset[str]:
    """The newest migrations' revisions, read from the files as text (Alembic's own answer
    needs its import; tests check that both agree)."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in MIGRATIONS.glob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = {t.id for t in targets if isinstance(t, ast.Name)}
                if node.value is None or not names & {"revision", "down_revision"}:
                    continue
                value = ast.literal_eval(node.value)
                found = {value} if isinstance(value, str) else set(value or ())
                (revisions if "revision" in names else parents).update(found)
    return frozenset(revisions - parents)


def is_current(url: str) -> bool:
    """True when the store at ``url`` is at the newest migration (no Alembic import)."""
    engine = engine_for(url)
    with engine.connect() as connection:
        if not inspect(connection).has_table("alembic_version"):
            return False
        stored = connection.execute(text("SELECT version_num FROM alembic_version")).scalars()
        return frozenset(stored) == head_revisions()


_first_use = threading.Lock()
_factories: dict[str, sessionmaker[Session]] = {}


def _factory(url: str) -> sessionmaker[Session]:
    """The session factory of ``url``, made once per process.

    Its first use migrates a SQLite store unless it is current. Threads of one worker reach
    this together, and Alembic's command context is process-global, so the first use is
    serialised.
    """
    factory = _factories.get(url)
    if factory is not None:
        return factory
    with _first_use:
        if url not in _factories:
            if url.startswith("sqlite") and not is_current(url):
                upgrade(url)
            _factories[url] = sessionmaker(engine_for(url), expire_on_commit=False)
        return _factories[url]


@contextmanager
def session_scope(url: str | None = None) -> Iterator[Session]:
    """A session in one transaction: committed on success, rolled back on error."""
    factory = _factory(url or get_settings().database_url)
    with factory() as session, session.begin():
        yield session


T = TypeVar("T")

TRANSACTION_ATTEMPTS = 3
"""How many times `in_transaction` runs its work when the database ends it to let another go on."""


def in_transaction(work: Callable[[Session], T], url: str | None = None) -> T:
    """``work`` in one transaction (`session_scope`), run again from the start when PostgreSQL
    ended the transaction so that another could go on: a deadlock, or a serialization failure
    (SQLSTATE class 40, `rolled_back_by_the_database`). Nothing of a transaction so ended is
    kept, so the same work run again is what the caller asked for; PostgreSQL's manual advises
    exactly this retry. Any other error, and the last attempt's, is raised as it was."""
    for attempt in range(1, TRANSACTION_ATTEMPTS + 1):
        try:
            with session_scope(url) as session:
                return work(session)
        except DBAPIError as error:
            if attempt == TRANSACTION_ATTEMPTS or not rolled_back_by_the_database(error):
                raise
    raise AssertionError("unreachable")  # the loop returns or raises


def rolled_back_by_the_database(error: DBAPIError) -> bool:
    """Whether the database ended the transaction so that a concurrent one could go on
    (SQLSTATE class 40: deadlock_detected, serialization_failure): the transaction run again
    can succeed. SQLite reports no such class: its writers take turns on the whole store."""
    return str(getattr(error.orig, "sqlstate", None) or "").startswith("40")


REPLICA = "evalq_replica"
"""The `Session.info` key that marks a session on the read replica (`read_scope`)."""


@contextmanager
def read_scope(settings: Settings | None = None) -> Iterator[Session]:
    """A session for a read that tolerates lag: on ``EVALQ_READ_DATABASE_URL`` when it is set
    (a streaming replica of the store), else the store's own, as `session_scope`.

    Only for reads a reader accepts slightly old: boards, comparisons, reports, UI pages. Never
    for a write (a replica refuses them) nor for a submitter's read of its own run (status,
    result, wait), which must see what it just wrote and stays on the primary. A replica
    session is marked (`REPLICA`) so that a board can say how far behind it may be
    (`replica_lag_s`).
    """
    settings = settings or get_settings()
    url = settings.read_database_url or settings.database_url
    with session_scope(url) as session:
        if settings.read_database_url:
            session.info[REPLICA] = True
        yield session


LAG_S = text(
    "SELECT CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0.0 "
    "ELSE EXTRACT(EPOCH FROM clock_timestamp() - "
    "COALESCE(pg_last_xact_replay_timestamp(), pg_postmaster_start_time())) END"
)
"""A PostgreSQL standby's lag: none when it has replayed all the WAL it received, else the age
of the last transaction it replayed (or of its start, before it replayed any): an upper bound,
since the primary may have written nothing newer in that time."""


def replica_lag_s(session: Session) -> float | None:
    """How many seconds behind the primary the data ``session`` reads may be: None on the
    primary (or a store without a replica), 0.0 on a replica that has replayed everything it
    received, else the age of its last replayed transaction. Read once per board."""
    if not session.info.get(REPLICA):
        return None
    lag = session.execute(LAG_S).scalar_one()
    return max(0.0, round(float(lag), 3))


@contextmanager
def session_for(url: str | None = None) -> Iterator[Session]:
    """A session for several transactions in turn (each ``with session.begin():``), closed at
    the end; between them it holds no connection (a tier task's compute runs there)."""
    factory = _factory(url or get_settings().database_url)
    with factory() as session:
        yield session
