"""Fixtures shared by every test live in the conftest files below this one; helpers tests
import live in tests/support/ (services.py says where Redis and PostgreSQL are).

Two rules of the whole suite live here (README, "Development"):

- **Which backends.** A case parametrized over the store's backend runs on PostgreSQL as well as
  SQLite only where the database matters: modules marked ``both_databases`` (the store, the
  queue's merges and recovery, intake, review decisions; the drills use PostgreSQL only).
  Elsewhere its PostgreSQL variant is deselected; ``--both-databases`` runs every variant.
- **Which worker.** Under pytest-xdist a module runs on one worker, so its module-scoped servers
  start once; the fault drills share one worker, one after another; the cases of the
  modules in ``SPREAD`` go one by one (`scope_of`; xdist's own ``--dist loadgroup`` marks have
  no effect with pytest 9.2, which ignores the node id xdist 3.8 rewrites); ``LONGEST`` first.
  Tests marked ``exclusive`` run alone, one after another, after the rest (Makefile): the drill
  that restarts the shared PostgreSQL, and the two that run a local LLM, which need the cores to
  themselves (starved by three other workers, one took 12 min and its samples timed out).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import settings

from evalq.core.settings import get_settings

# Re-exported while the suites that import them from here move to tests.support.services.
from tests.support.services import (
    PG_ADMIN_URL,
    PG_HOST,
    PG_PORT,
    REDIS_HOST,
    REDIS_PORT,
    need,
    reachable,
)

__all__ = ["PG_ADMIN_URL", "PG_HOST", "PG_PORT", "REDIS_HOST", "REDIS_PORT", "need", "reachable"]

# No example of a property may fail for taking long: a time limit is a timed assertion, and on
# two cores shared by four xdist workers any example can wait seconds for a core.
settings.register_profile("evalq", deadline=None)
settings.load_profile("evalq")


@pytest.fixture(autouse=True)
def _settings_read_again_after_each_test() -> Iterator[None]:
    """After each test (and after its monkeypatch restored the environment) the process's
    settings are read again from the environment: a test that configured its own store
    (`tests.support.settings.configure`) must not leave it cached for the next test of the same
    worker, which would open that store (dropped by then) wherever it reads `get_settings`
    (e.g. a UI app's start-up recovery)."""
    yield
    get_settings.cache_clear()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--both-databases",
        action="store_true",
        help="run every backend-parametrized case on PostgreSQL too, not only both_databases ones",
    )


def on_postgresql_only_by_choice(item: pytest.Item) -> bool:
    """True for the PostgreSQL variant of a case whose module does not need both databases."""
    callspec = getattr(item, "callspec", None)
    values = callspec.params.values() if callspec is not None else ()
    if not any(value in ("postgresql", "pgbouncer") for value in values):
        return False
    return item.get_closest_marker("both_databases") is None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    first = sorted(items, key=lambda item: starts_first(item.nodeid))  # stable: else as collected
    items[:] = first
    if config.getoption("--both-databases"):
        return
    dropped = [item for item in items if on_postgresql_only_by_choice(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        kept = set(map(id, dropped))
        items[:] = [item for item in items if id(item) not in kept]


LONGEST = (
    "tests/drills/",  # one chain of ~10 min on a busy machine
    "tests/integration/ui/test_ui_browser.py",  # one module of ~8 min: it ended last when late
)
"""Started before the rest, in this order, so that no long chain starts last (the run takes at
least as long as its longest chain; `--durations` shows which they are)."""


def starts_first(nodeid: str) -> int:
    """The position of ``nodeid``'s module in `LONGEST`, or after them all."""
    for position, prefix in enumerate(LONGEST):
        if nodeid.startswith(prefix):
            return position
    return len(LONGEST)


SPREAD = ("tests/integration/test_benchmarks.py",)
"""Modules whose cases spread over the workers one by one (each is a subprocess of its own)."""


def scope_of(nodeid: str) -> str:
    """The unit of work an xdist worker takes whole: the drills together, a SPREAD case alone,
    otherwise its module (so a module-scoped server or store is made once).

    The drills stay one chain: split in two beside the other workers, the broker-flush drill's
    recovery missed its 600 s (a test run on 2026-11-26)."""
    module = nodeid.split("::", 1)[0]
    if module.startswith("tests/drills/"):
        return "tests/drills/"
    return nodeid if module in SPREAD else module


@pytest.hookimpl(tryfirst=True)  # before xdist's own
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Schedule by `scope_of`, in collection order (`LONGEST` first).

    Only for ``-n N`` alone (xdist's default ``--dist load``); another ``--dist`` is xdist's.
    """
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SuiteScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    config.option.loadscopereorder = False
    return SuiteScheduling(config, log)
