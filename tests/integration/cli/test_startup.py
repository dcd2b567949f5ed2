"""`evalq leaderboard` on a current store loads what reading a board needs, not the migration
machinery (Alembic), not scipy, not the broker: start-up is most of a read command's time.

Checked on what the process has loaded, never on a time (bench/cli_startup.py has the figures).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalq.producer.cli import app
from tests.support.processes import PATIENCE
from tests.support.small_board import TASK_ID, small_board_store

NOT_FOR_A_READ = (
    "alembic",
    "mako",
    "scipy",
    "celery",
    "kombu",
    "redis",
    "networkx",
    "torch",
    "fastapi",
)


def test_a_leaderboard_loads_no_migrations_broker_or_scipy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, count = small_board_store(tmp_path, monkeypatch)
    code = (
        "import sys\n"
        "from evalq.producer.cli import main\n"
        f"sys.argv = ['evalq', 'leaderboard', {TASK_ID!r}, '--json']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as stop:\n"
        "    assert not stop.code, stop.code\n"
        f"loaded = sorted(m for m in {NOT_FOR_A_READ!r} if m in sys.modules)\n"
        "print('loaded:', ','.join(loaded))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        env=os.environ | {"EVALQ_DATABASE_URL": url},
        capture_output=True,
        text=True,
        timeout=120 * PATIENCE,
    )
    assert result.returncode == 0, result.stderr
    board, _, last = result.stdout.rstrip("\n").rpartition("\n")
    assert last == "loaded: "
    assert len(json.loads(board)["entries"]) == count == 12


def test_a_board_is_paged_by_cursor_from_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_board_store(tmp_path, monkeypatch)
    runner = CliRunner()
    first = runner.invoke(app, ["leaderboard", TASK_ID, "--limit", "5"], terminal_width=400)
    assert first.exit_code == 0, first.output
    assert "entries 1-5 of 12" in first.output
    (cursor,) = re.findall(r"next page: --limit 5 --cursor (\S+)", first.output)
    second = runner.invoke(
        app, ["leaderboard", TASK_ID, "--limit", "5", "--cursor", cursor, "--json"]
    )
    assert second.exit_code == 0, second.output
    page = json.loads(second.output)
    assert (page["offset"], len(page["entries"]), page["board_moved"]) == (5, 5, False)
    refused = runner.invoke(app, ["leaderboard", TASK_ID, "--limit", "6", "--cursor", cursor])
    assert refused.exit_code != 0 and "cursor" in refused.output
