"""`evalq` commands end in one line naming what is down, never a traceback (unless --debug)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.databases import private_redis
from tests.support.processes import EVALQ, PATIENCE, free_port, process_env
from tests.support.settings import REDIS_TEST_DB

RUN = {"id": "r1", "task_id": "t1", "tool": "aider", "model": "m", "usage": {"total_tokens": 9}}


def evalq(args: list[str], cwd: Path, **settings: str) -> subprocess.CompletedProcess[str]:
    """Run the real `evalq` script with only ``settings`` as its EVALQ_* environment."""
    env = process_env(settings, drop=("EVALQ_",))
    return subprocess.run(
        [EVALQ, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120 * PATIENCE
    )


@pytest.fixture
def files(tmp_path: Path) -> Path:
    # reference outputs: the run fans out (tier 1), so submitting it needs the broker
    task = {"id": "t1", "category": "debugging", "reference_outputs": ["A careful fix."]}
    (tmp_path / "tasks.json").write_text(json.dumps([task]))
    (tmp_path / "runs.jsonl").write_text(json.dumps(RUN) + "\n")
    return tmp_path


def test_a_database_that_is_down_is_one_line(files: Path) -> None:
    down = f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/evalq"
    for args in (["submit", "runs.jsonl"], ["leaderboard", "t1"], ["task", "put", "tasks.json"]):
        result = evalq(args, files, database_url=down, broker_url="redis://127.0.0.1:6379/0")
        assert result.returncode == 2, result.stderr
        assert result.stderr.splitlines() == [result.stderr.strip()], result.stderr
        assert result.stderr.startswith("error: the database is unavailable (")
        assert "EVALQ_DATABASE_URL" in result.stderr


def test_a_broker_that_is_down_is_one_line(files: Path) -> None:
    store = f"sqlite:///{files / 'e.db'}"
    down = f"redis://127.0.0.1:{free_port()}/0"
    assert evalq(["task", "put", "tasks.json"], files, database_url=store).returncode == 0
    for args in (["submit", "runs.jsonl"], ["status"], ["recover", "--older-than", "0"]):
        result = evalq(args, files, database_url=store, broker_url=down)
        assert result.returncode == 2, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert result.stderr.startswith("error: the broker is unavailable (")


def test_debug_shows_the_traceback(files: Path) -> None:
    down = f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/evalq"
    result = evalq(["--debug", "leaderboard", "t1"], files, database_url=down)
    assert "Traceback (most recent call last)" in result.stderr
    assert "OperationalError" in result.stderr


def test_waiting_on_redis_ends_without_exit_noise(files: Path) -> None:
    """An `evalq submit` that waits on Redis used to end with "Exception ignored in
    AsyncResult.__del__" (its result subscription, torn down at interpreter exit)."""
    store = f"sqlite:///{files / 'e.db'}"
    assert evalq(["task", "put", "tasks.json"], files, database_url=store).returncode == 0
    with private_redis(REDIS_TEST_DB) as broker:
        result = evalq(
            ["submit", "runs.jsonl", "--timeout", "1"], files, database_url=store, broker_url=broker
        )
    assert result.returncode == 1  # no worker: it times out
    assert "Exception ignored" not in result.stderr, result.stderr
    assert result.stderr.strip().splitlines() == [
        "error: 1 submissions unfinished, e.g. ['r1']; they stay stored: "
        "`evalq status ID` shows one, `evalq recover` runs them again"
    ]


def test_a_setting_that_breaks_its_rule_is_one_line(files: Path) -> None:
    result = evalq(["leaderboard", "t1"], files, visibility_timeout_s="an hour")
    assert result.returncode == 3
    assert result.stderr.strip().splitlines() == [
        "error: invalid settings: EVALQ_VISIBILITY_TIMEOUT_S: Input should be a valid integer, "
        "unable to parse string as an integer"
    ]
