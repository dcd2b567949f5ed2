"""The same data gives the same board, whatever order the merges ran in (issue 25 item 4).

The bundled Arena examples are evaluated twice into two stores, one run at a time, once in file
order and once reversed, so every merge sees another baseline. After the refresh both stores
hold the same review flags and serve the same boards; only the baseline's version number (how
many refreshes happened) may differ.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.support.databases import migrate_store
from tests.support.processes import PATIENCE
from tests.support.settings import configure

from evalq.core.schemas import Submission
from evalq.producer.cli import EXAMPLES
from evalq.producer.files import read_jsonl, read_tasks
from evalq.read.leaderboard import leaderboard
from evalq.service.client import Client
from evalq.store.db import session_scope
from evalq.store.models import SubmissionRow
from evalq.tasks.merge import refresh_baseline
from evalq.workers.bootstrap import worker_app
from evalq.workers.embedded import embedded_worker

pytestmark = pytest.mark.timeout(900)


def arena_examples() -> tuple[list[Any], list[Submission]]:
    tasks = [t for t in read_tasks(EXAMPLES / "tasks.json") if t.id.startswith("arena-")]
    submissions: list[Submission] = []
    for path in sorted(EXAMPLES.glob("arena*.jsonl")):
        good, bad = read_jsonl(path)
        assert not bad
        submissions += [s for _, s in good]
    return tasks, submissions


def evaluate_one_by_one(url: str, tasks: list[Any], submissions: list[Submission]) -> None:
    migrate_store(url)
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.delenv("EVALQ_BROKER_URL", raising=False)
        monkeypatch.delenv("EVALQ_JUDGE_MODEL", raising=False)
        configure(monkeypatch, database_url=url, baseline_refresh_debounce_s="0")
        client = Client(app=worker_app())
        with embedded_worker(client.app):
            for task in tasks:
                client.put_task(task)
            for submission in submissions:  # one merge at a time, each after a refresh
                [sent] = client.submit_many([submission])
                assert client.wait([sent.id], timeout=120 * PATIENCE) == {sent.id: "done"}
                refresh_baseline(submission.task_id)
            for task in tasks:
                refresh_baseline(task.id)
        client.app.close()
    configure(pytest.MonkeyPatch())


def boards(url: str, task_ids: list[str]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    with session_scope(url) as session:
        for task_id in task_ids:
            board = leaderboard(session, task_id=task_id).model_dump(mode="json")
            board.pop("baseline_version")
            found[task_id] = board
        found["review"] = {
            row.id: row.review for row in session.query(SubmissionRow).order_by(SubmissionRow.id)
        }
    return found


def test_two_merge_orders_give_the_same_boards_and_flags(tmp_path: Path) -> None:
    tasks, submissions = arena_examples()
    assert len(submissions) > 30
    forward, backward = f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}"
    evaluate_one_by_one(forward, tasks, submissions)
    evaluate_one_by_one(backward, tasks, list(reversed(submissions)))
    ids = [t.id for t in tasks]
    first, second = boards(forward, ids), boards(backward, ids)
    assert first["review"] == second["review"]
    assert "flagged" in first["review"].values()  # the demo's arena-fe-09 is held in both
    for task_id in ids:
        assert first[task_id] == second[task_id], where_they_differ(
            first[task_id], second[task_id]
        )[:10]


def where_they_differ(a: Any, b: Any, path: str = "") -> list[str]:
    """Where two dumped boards differ, as ``path: a != b`` lines (the assertion's message)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in a for d in where_they_differ(a[k], b.get(k), f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        pairs = enumerate(zip(a, b, strict=True))
        return [d for i, (x, y) in pairs for d in where_they_differ(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]
