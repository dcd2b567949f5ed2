"""A command-line value the store cannot hold ends in one line naming it, exit 2, on both
databases (it ended "unexpected UnicodeEncodeError", exit 1)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.processes import EVALQ, PATIENCE, process_env

pytestmark = pytest.mark.both_databases

BAD = os.fsdecode(b"t\xff")
COMMANDS = [
    (["status", BAD], "argument 't\\udcff'"),
    (["leaderboard", BAD], "argument 't\\udcff'"),
    (["task", "submissions", BAD], "argument 't\\udcff'"),
    (["labels", "list", "--labeller", BAD], "--labeller"),
    (["labels", "export", f"--task={BAD}"], "--task"),
    (["review", "accept", BAD, "--reason", "ok"], "argument 't\\udcff'"),
]


@pytest.mark.parametrize(("args", "named"), COMMANDS)
def test_an_unstorable_value_is_named(
    db_url: str, tmp_path: Path, args: list[str], named: str
) -> None:
    env = process_env({"database_url": db_url}, drop=("EVALQ_",))
    result = subprocess.run(
        [EVALQ, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120 * PATIENCE,
    )
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stderr.strip() == (
        f"error: {named}: string must be valid Unicode (no lone surrogates)"
    ), result.stderr
