"""A test's own settings end with it: the next test of the worker reads the process's settings
from its environment, not the store an earlier test configured (tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalq.core.settings import Settings, get_settings
from tests.support.settings import configure

ELSEWHERE = "sqlite:///" + str(Path("/nonexistent-store-of-an-earlier-test") / "evalq.db")


def test_a_test_configures_a_store_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    configure(monkeypatch, database_url=ELSEWHERE)
    assert get_settings().database_url == ELSEWHERE


def test_the_next_test_reads_the_settings_of_the_process() -> None:
    assert get_settings().database_url != ELSEWHERE
    assert get_settings().database_url == Settings().database_url
