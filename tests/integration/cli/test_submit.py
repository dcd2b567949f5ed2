"""`evalq submit FILE.jsonl`: bad lines are reported by number and nothing is submitted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from evalq.producer.cli import app
from evalq.store.db import session_scope
from evalq.store.models import SubmissionRow
from tests.integration.conftest import configure

TASK = {"id": "t1", "category": "debugging"}


def line(sid: str, **usage: object) -> str:
    return json.dumps(
        {
            "id": sid,
            "task_id": "t1",
            "tool": "aider",
            "model": "gpt-4o",
            "usage": {"total_tokens": 100, **usage},
        }
    )


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    configure(
        monkeypatch, database_url=url, broker_url="memory://", result_backend="cache+memory://"
    )
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps([TASK]))
    result = CliRunner().invoke(app, ["task", "put", str(tasks)])
    assert result.exit_code == 0, result.output
    return url


def stored(url: str) -> int:
    with session_scope(url) as session:
        return int(session.scalar(select(func.count()).select_from(SubmissionRow)) or 0)


def test_bad_lines_are_named_and_nothing_is_submitted(store: str, tmp_path: Path) -> None:
    file = tmp_path / "batch.jsonl"
    file.write_text("\n".join([line("ok-1"), "{not json", line("bad-3", iterations=0), ""]))
    result = CliRunner().invoke(app, ["submit", str(file), "--no-wait"])
    assert result.exit_code == 2
    assert f"{file}:2: (line): not valid JSON" in result.output
    assert f"{file}:3: usage.iterations: Input should be greater than or equal to 1" in (
        result.output
    )
    assert "nothing submitted" in result.output
    assert stored(store) == 0


def test_skip_invalid_submits_the_good_lines(store: str, tmp_path: Path) -> None:
    file = tmp_path / "batch.jsonl"
    file.write_text("\n".join([line("ok-1"), line("bad-2", tool_calls=-1), line("ok-3")]))
    result = CliRunner().invoke(app, ["submit", str(file), "--no-wait", "--skip-invalid"])
    assert result.exit_code == 0, result.output
    assert "usage.tool_calls" in result.output
    assert "submitted 2 (2 new, 0 existing)" in result.output
    assert stored(store) == 2


def test_unknown_task_is_a_clear_error(store: str, tmp_path: Path) -> None:
    file = tmp_path / "batch.jsonl"
    file.write_text(line("x").replace('"t1"', '"nope"'))
    result = CliRunner().invoke(app, ["submit", str(file), "--no-wait"])
    assert result.exit_code == 2
    assert "task_id: unknown task 'nope'" in result.output
    assert stored(store) == 0
