"""A monitor with ``rule = "anytime"`` on the bundled examples' stored runs: the same window
the fixed threshold reads, judged by the sequential test (`evalq.scoring.anytime`)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from evalq.core.settings import Settings
from evalq.read import monitors
from evalq.store.db import session_scope

TASK = "scylla-token-bucket"


@pytest.fixture
def copy(store: str, tmp_path: Path) -> str:
    with (
        closing(sqlite3.connect(store.removeprefix("sqlite:///"))) as source,
        closing(sqlite3.connect(tmp_path / "evalq.db")) as target,
    ):
        source.backup(target)
    return f"sqlite:///{tmp_path / 'evalq.db'}"


def _state(url: str, name: str, **fields: object) -> str:
    data = {"tasks": TASK, "statistic": "mean", "last_runs": 20, "min_n": 5, **fields}
    with session_scope(url) as session:
        found, _ = monitors.set_monitor(session, name=name, data=data, settings=Settings())
    (state,) = found.states
    return state.state


def test_a_mean_just_under_the_threshold_alerts_fixed_but_not_anytime(copy: str) -> None:
    with session_scope(copy) as session:
        found, _ = monitors.set_monitor(
            session,
            name="probe",
            data={"tasks": TASK, "last_runs": 20, "alert": 0.0},
            settings=Settings(),
        )
    mean = found.states[0].value
    assert mean is not None and 0.2 < mean < 0.95
    # a threshold a hair above the window's mean: the fixed rule alerts, the test cannot tell
    assert _state(copy, "fixed", alert=mean + 0.01) == "alert"
    assert _state(copy, "anytime", alert=mean + 0.01, rule="anytime") == "ok"
    # far above the runs' mean: the test finds the drop too
    assert _state(copy, "far", alert=0.99, rule="anytime", level=0.05) == "alert"
