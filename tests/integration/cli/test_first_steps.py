"""The first commands a person types, as the README, the sign-in page and `evalq demo` write them,
run as written against a fresh store (docs/ui.md, "Opening it after make demo")."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

from fastapi.testclient import TestClient

from evalq.core.settings import Settings
from evalq.producer.api.app import create_app
from evalq.producer.cli.demo import UI_URL
from tests.support.processes import EVALQ, PATIENCE, process_env

ROOT = Path(__file__).resolve().parents[3]
TASK = {"id": "t1", "category": "debugging", "success_criteria": [{"type": "no_errors"}]}
RUN = {
    "id": "r1",
    "task_id": "t1",
    "tool": "aider",
    "model": "gpt-4o",
    "usage": {"input_tokens": 900, "output_tokens": 200, "tool_calls": 3, "execution_time": 9.5},
    "output": "Fixed the date parser and added a regression test.",
}


def run_as_written(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``command`` (one shell line, its comment dropped) with its `evalq` replaced by this
    environment's, with no EVALQ_* setting: the store is ``cwd``/evalq.db."""
    program, *args = shlex.split(command, comments=True)
    assert program.endswith("evalq"), command
    return subprocess.run(
        [EVALQ, *args],
        cwd=cwd,
        env=process_env({}),
        capture_output=True,
        text=True,
        timeout=300 * PATIENCE,
    )


def test_the_sign_in_pages_command_creates_a_key_as_written(tmp_path: Path) -> None:
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'evalq.db'}")
    page = TestClient(create_app(settings)).get("/ui/login").text  # no lifespan: no worker
    found = re.search(r"<code>(evalq keys create [^<]*)</code>", page)
    assert found is not None, page
    created = run_as_written(found.group(1).replace("NAME", "me"), tmp_path)
    assert created.returncode == 0, created.stderr
    assert created.stdout.startswith("evq_")


def test_the_readmes_ui_commands_run_after_make_demo_as_written(tmp_path: Path) -> None:
    """`make demo` never activates .venv, so each command names .venv/bin/ (was a bare
    `evalq`: command not found)."""
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"\*\*The web UI\*\*.*?```sh\n(.*?)```", readme, re.S)
    assert block is not None
    commands = [line for line in block.group(1).splitlines() if line.strip()]
    assert all(line.startswith(".venv/bin/") for line in commands), commands
    (keys,) = [line for line in commands if " keys create " in line]
    created = run_as_written(keys, tmp_path)
    assert created.returncode == 0, created.stderr
    assert any(line.startswith(".venv/bin/evalq api ") for line in commands)


def test_the_demo_ends_by_saying_how_to_open_the_ui(tmp_path: Path) -> None:
    examples = tmp_path / "examples"
    examples.mkdir()
    (examples / "tasks.json").write_text(json.dumps([TASK]))
    (examples / "runs.jsonl").write_text(json.dumps(RUN) + "\n")
    demo = run_as_written(f"evalq demo --examples {examples}", tmp_path)
    assert demo.returncode == 0, demo.stderr
    *_, intro, keys, api, then = demo.stdout.splitlines()
    assert intro.startswith("Open these results in the web UI")
    program, command = api.split("#")[0].split()
    assert program in (EVALQ, "evalq") and command == "api" and UI_URL in api
    assert then == f"then open {UI_URL} and sign in with the key."
    created = run_as_written(keys, tmp_path)  # in the demo's store
    assert created.returncode == 0, created.stderr
    assert created.stdout.startswith("evq_")
