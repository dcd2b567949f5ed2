"""Workers commit without waiting for the disk; producers (and everything else) wait."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.integration.store.conftest import BACKENDS
from tests.support.databases import fresh_database
from tests.support.processes import PATIENCE

pytestmark = pytest.mark.both_databases  # the database matters here (tests/conftest.py)

PROBE = """
import sys
from evalq.store.db import commit_durability, relax_durability, session_scope
if sys.argv[2] == "worker":
    relax_durability()
with session_scope(sys.argv[1]) as session:
    print(commit_durability(session))
"""


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with fresh_database(request.param, tmp_path) as url:
        yield url


def durability(url: str, role: str) -> str:
    """What a fresh process in ``role`` reports for its commits to ``url``."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, url, role],
        capture_output=True,
        text=True,
        timeout=60 * PATIENCE,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_only_a_worker_relaxes_commit_durability(store: str) -> None:
    full, relaxed = ("full", "normal") if store.startswith("sqlite") else ("on", "off")
    assert durability(store, "producer") == full
    assert durability(store, "worker") == relaxed
    # Through PgBouncer the producer gets the server connection the worker used last: the
    # worker's setting must have ended with its transaction (store/db.py, POOLER_SAFE).
    assert durability(store, "producer") == full
