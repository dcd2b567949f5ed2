"""`evalq submit FILE.jsonl`: bad lines are reported by number and nothing is submitted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner, Result

from evalq.producer.cli import app
from evalq.store.db import session_scope
from evalq.store.models import SubmissionRow, TaskRow
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
    assert f"{file}:1: task_id: unknown task 'nope'" in result.output
    assert stored(store) == 0


def submit(file: Path, *options: str) -> Result:
    return CliRunner().invoke(app, ["submit", str(file), "--no-wait", *options])


def write_lines(path: Path, *lines: str | bytes) -> Path:
    path.write_bytes(b"\n".join(ln if isinstance(ln, bytes) else ln.encode() for ln in lines))
    return path


def test_invalid_utf8_is_named_by_line_not_a_traceback(store: str, tmp_path: Path) -> None:
    file = write_lines(tmp_path / "b.jsonl", line("ok-1"), line("bad-2").encode()[:-2] + b"\xff}}")
    result = submit(file)
    assert result.exit_code == 2, result.output  # was a UnicodeDecodeError traceback
    assert f"{file}:2: (line): must be UTF-8 encoded JSON" in result.output
    assert stored(store) == 0


@pytest.mark.parametrize("field", ["tool", "output"])
def test_a_nul_is_named_by_line_and_field_and_never_stored(
    store: str, tmp_path: Path, field: str
) -> None:
    bad = json.loads(line("bad-1")) | {field: "a\x00b"}
    file = write_lines(tmp_path / "b.jsonl", json.dumps(bad), line("ok-2"))
    result = submit(file)
    assert result.exit_code == 2, result.output
    assert f"{file}:1: {field}: string must not contain NUL characters" in result.output
    assert stored(store) == 0


def test_a_lone_surrogate_is_named_by_line_and_field(store: str, tmp_path: Path) -> None:
    file = write_lines(tmp_path / "b.jsonl", line("ok-1").replace('"aider"', '"a\\ud800"'))
    result = submit(file)
    assert result.exit_code == 2, result.output
    assert f"{file}:1: tool: string must be valid Unicode (no lone surrogates)" in result.output
    assert stored(store) == 0


@pytest.mark.parametrize("separator", ["\u2028", "\u0085", "\u2029"])
def test_lines_end_only_at_newline(store: str, tmp_path: Path, separator: str) -> None:
    """`str.splitlines` split a valid line at these, so the run was dropped and lines shifted."""
    first = json.dumps(json.loads(line("sep-1")) | {"output": f"a{separator}b"}, ensure_ascii=False)
    file = write_lines(tmp_path / "b.jsonl", first, line("bad-2", iterations=0), line("ok-3"))
    result = submit(file, "--skip-invalid")
    assert result.exit_code == 0, result.output
    assert f"{file}:2: usage.iterations" in result.output
    assert f"{file}:1:" not in result.output and f"{file}:3:" not in result.output
    assert "submitted 2 (2 new, 0 existing)" in result.output
    with session_scope(store) as session:
        row = session.get(SubmissionRow, "sep-1")
        assert row is not None and row.payload["output"] == f"a{separator}b"


def test_an_unknown_task_is_named_by_line_and_skippable(store: str, tmp_path: Path) -> None:
    unknown = line("x-2").replace('"t1"', '"nope"')
    file = write_lines(tmp_path / "b.jsonl", line("ok-1"), unknown, line("ok-3"))
    result = submit(file)
    assert result.exit_code == 2
    assert f"{file}:2: task_id: unknown task 'nope'; define it first" in result.output
    assert stored(store) == 0
    skipped = submit(file, "--skip-invalid")
    assert skipped.exit_code == 0, skipped.output
    assert f"{file}:2: task_id: unknown task 'nope'" in skipped.output
    assert "submitted 2 (2 new, 0 existing)" in skipped.output
    assert stored(store) == 2


@pytest.mark.parametrize("content", [b"", b"\n\n  \n", b"\r\n"])
def test_a_file_without_submissions_is_an_error(store: str, tmp_path: Path, content: bytes) -> None:
    file = tmp_path / "empty.jsonl"
    file.write_bytes(content)
    result = submit(file)
    assert result.exit_code == 2
    assert f"{file} holds no submissions" in result.output and "submitted 0" not in result.output


def test_skip_invalid_with_no_valid_line_submits_nothing_and_fails(
    store: str, tmp_path: Path
) -> None:
    file = write_lines(tmp_path / "b.jsonl", "{", line("bad-2", tool_calls=-1))
    result = submit(file, "--skip-invalid")
    assert result.exit_code == 2
    assert "no valid line" in result.output and "submitted 0" not in result.output


def test_deep_nesting_and_huge_numbers_are_named_by_line(store: str, tmp_path: Path) -> None:
    deep = '{"id": ' + "[" * 5000 + "]" * 5000 + "}"
    huge = line("n-2").replace("100", "9" * 5000)
    file = write_lines(tmp_path / "b.jsonl", deep, huge, line("n-3").replace("100", "1e999"))
    result = submit(file)
    assert result.exit_code == 2, result.output
    assert f"{file}:1: (line): nested deeper than 32 levels" in result.output
    assert f"{file}:2: (line): integer out of range" in result.output
    assert f"{file}:3: (line): number must be finite" in result.output


def test_an_unreadable_file_is_one_line(store: str, tmp_path: Path) -> None:
    result = submit(tmp_path / "missing.jsonl")
    assert result.exit_code == 2
    assert f"{tmp_path / 'missing.jsonl'}: cannot read: No such file or directory" in (
        result.output
    )


def put_tasks(path: Path) -> Result:
    return CliRunner().invoke(app, ["task", "put", str(path)])


def test_task_put_names_invalid_utf8(store: str, tmp_path: Path) -> None:
    file = tmp_path / "tasks.json"
    file.write_bytes(b'{"id": "t2", "context": "caf\xe9"}')
    result = put_tasks(file)
    assert result.exit_code == 2, result.output
    assert f"{file}: must be UTF-8 encoded JSON (bad byte at offset 28)" in result.output
    assert task_ids(store) == {"t1"}


def test_task_put_names_a_nul_and_stores_nothing(store: str, tmp_path: Path) -> None:
    file = tmp_path / "tasks.json"
    bad = {"id": "t3", "reference_outputs": ["fine", "a\x00b"]}
    file.write_text(json.dumps([{"id": "t2"}, bad]))
    result = put_tasks(file)
    assert result.exit_code == 2, result.output
    assert f"{file}: [1].reference_outputs.1: string must not contain NUL characters" in (
        result.output
    )
    assert task_ids(store) == {"t1"}


def task_ids(url: str) -> set[str]:
    with session_scope(url) as session:
        return set(session.scalars(select(TaskRow.id)))


def test_a_submission_id_with_a_slash_is_named_by_line_and_field(
    store: str, tmp_path: Path
) -> None:
    """``a/../b`` was stored, and over HTTP its ``url`` was a 404."""
    file = write_lines(tmp_path / "b.jsonl", line("ok-1"), line("a/../b"))
    result = submit(file)
    assert result.exit_code == 2, result.output
    assert f"{file}:2: id: Value error, a submission id must not contain '/'" in result.output
    assert stored(store) == 0
