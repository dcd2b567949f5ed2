"""A small evaluated store without a model: the bundled Arena task and its 12 submissions.

References and traces are left out and no judge is configured, so tiers 1-3 are skipped at
submit and only the merge runs (in this process, over kombu's in-memory transport): a real
leaderboard in a few seconds. Used by the CLI start-up test and bench/cli_startup.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalq.core.schemas import Task, parse_submission
from evalq.producer.cli.demo import EXAMPLES
from evalq.service.client import Client
from evalq.workers.bootstrap import worker_app
from evalq.workers.embedded import embedded_worker
from tests.support.at_rest import settle
from tests.support.databases import migrate_store
from tests.support.processes import PATIENCE
from tests.support.settings import configure

TASK_ID = "arena-frontend-dark-mode"


def evaluate_small_board(url: str) -> int:
    """Store and evaluate the board at ``url`` (EVALQ_DATABASE_URL must name it and no
    EVALQ_BROKER_URL be set); how many submissions it holds."""
    migrate_store(url)
    tasks = json.loads((EXAMPLES / "tasks.json").read_text())
    definition = next(task for task in tasks if task["id"] == TASK_ID)
    definition.pop("reference_outputs", None)
    lines = [json.loads(line) for line in (EXAMPLES / "arena.jsonl").read_text().splitlines()]
    submissions = [
        parse_submission({key: value for key, value in line.items() if key != "trace"})
        for line in lines
        if line["task_id"] == TASK_ID
    ]
    client = Client(app=worker_app())
    with embedded_worker(client.app):
        client.put_task(Task.model_validate(definition))
        ids = [result.id for result in client.submit_many(submissions)]
        statuses = client.wait(ids, timeout=300 * PATIENCE)
    client.app.close()
    settle(url)  # the worker stopped: handed over at rest
    if set(statuses.values()) != {"done"}:
        raise RuntimeError(f"the small board did not evaluate: {statuses}")
    return len(ids)


def small_board_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, int]:
    """A SQLite store under ``tmp_path`` configured for this test (no broker, no judge) and
    its board evaluated: its URL and how many submissions it holds."""
    url = f"sqlite:///{tmp_path / 'evalq.db'}"
    monkeypatch.delenv("EVALQ_BROKER_URL", raising=False)
    monkeypatch.delenv("EVALQ_JUDGE_MODEL", raising=False)
    configure(monkeypatch, database_url=url)
    return url, evaluate_small_board(url)
