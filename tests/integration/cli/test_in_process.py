"""With no broker configured every front door evaluates in this process, as `evalq demo` does."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from sqlalchemy import select

from evalq.core.settings import Settings
from evalq.service.client import Client
from evalq.store.db import session_scope
from evalq.store.models import SubmissionRow
from tests.support.processes import EVALQ, PATIENCE, process_env

ROOT = Path(__file__).resolve().parents[3]
# Reference outputs: tier 1 applies, so a run waits for a worker (one with nothing to fan out is
# evaluated as it is stored, and would leave `evalq recover` nothing to do).
TASK = {
    "id": "t1",
    "category": "debugging",
    "success_criteria": [{"type": "no_errors"}],
    "reference_outputs": ["Fixed the parser and added a test."],
}


def run(sid: str) -> dict[str, object]:
    usage = {"input_tokens": 900, "output_tokens": 200, "tool_calls": 3, "execution_time": 9.5}
    return {
        "id": sid,
        "task_id": "t1",
        "tool": "aider",
        "model": "gpt-4o",
        "usage": usage,
        "output": "Fixed the date parser and added a regression test.",
    }


def no_broker(cwd: Path, args: list[str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`evalq ARGS` in ``cwd`` with no EVALQ_* setting at all: the store is ./evalq.db."""
    return subprocess.run(
        [EVALQ, *args],
        cwd=cwd,
        env=process_env({}),
        capture_output=True,
        text=True,
        timeout=timeout * PATIENCE,
    )


def statuses(directory: Path) -> dict[str, str]:
    with session_scope(f"sqlite:///{directory / 'evalq.db'}") as session:
        rows = session.execute(select(SubmissionRow.id, SubmissionRow.status))
        return {row.id: row.status for row in rows}


def test_the_readme_python_snippet_runs_as_written(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    using = readme[readme.index("## Using it") :]
    snippet = re.search(r"```python\n(.*?)```", using, re.S)
    assert snippet is not None
    code = snippet.group(1) + "\nprint(client.wait(['run-42']))\n"
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=process_env({}),
        capture_output=True,
        text=True,
        timeout=300 * PATIENCE,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "{'run-42': 'done'}"
    assert statuses(tmp_path) == {"run-42": "done"}


def test_submit_and_recover_evaluate_here(tmp_path: Path) -> None:
    (tmp_path / "tasks.json").write_text(json.dumps([TASK]))
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(run(f"r{i}")) + "\n" for i in (1, 2)))
    assert no_broker(tmp_path, ["task", "put", "tasks.json"]).returncode == 0

    refused = no_broker(tmp_path, ["submit", "runs.jsonl", "--no-wait"])
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        "error: --no-wait needs EVALQ_BROKER_URL (with no broker, evaluation runs here)"
    )
    assert statuses(tmp_path) == {}

    submitted = no_broker(tmp_path, ["submit", "runs.jsonl"])
    assert submitted.returncode == 0, submitted.stderr
    assert statuses(tmp_path) == {"r1": "done", "r2": "done"}

    # A run stored by a client that never waited (its process's queue died with it) is
    # evaluated by `evalq recover`, which needs no broker either.
    store = f"sqlite:///{tmp_path / 'evalq.db'}"
    Client(Settings(database_url=store)).submit(run("r3"))
    assert statuses(tmp_path)["r3"] == "queued"
    recovered = no_broker(tmp_path, ["recover"])
    assert recovered.returncode == 0, recovered.stderr
    assert "re-enqueued 1 submission(s)" in recovered.stdout
    assert statuses(tmp_path)["r3"] == "done"

    # Sending such a run again (an interrupted `evalq submit` run a second time) finishes it too.
    Client(Settings(database_url=store)).submit(run("r4"))
    (tmp_path / "again.jsonl").write_text(json.dumps(run("r4")) + "\n")
    again = no_broker(tmp_path, ["submit", "again.jsonl", "--timeout", str(120 * PATIENCE)])
    assert again.returncode == 0, again.stderr
    assert "submitted 1 (0 new, 1 existing)" in again.stdout
    assert statuses(tmp_path)["r4"] == "done"
