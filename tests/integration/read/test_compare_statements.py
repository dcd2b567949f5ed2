"""A comparison over many tasks reads them together (issue 27): the SQL statements it issues do
not grow with the number of tasks (main issued two per task: its baseline, its evaluations)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import insert, select
from tests.integration.read.test_select_counts import selects
from tests.support.databases import migrate_store
from tests.support.settings import configure

from evalq.core.schemas import STORED, Task
from evalq.read.compare import compare
from evalq.read.leaderboard import board_of
from evalq.read.view import task_view
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.store.models import EvaluationRow, SubmissionRow, TaskRow
from evalq.tasks.merge import refresh_baseline

SOURCE = "arena-debug-flaky-date-parser"
MODELS = ("claude-sonnet-4", "o3")


def copied_store(source: str, path: Path, tasks: int) -> str:
    """A new store with ``tasks`` copies of ``source``'s task, each holding two evaluated runs
    (one per model, different token counts) with the scores of one of its real evaluations."""
    url = f"sqlite:///{path}"
    migrate_store(url)
    with session_scope(source) as session:
        task_row = session.get(TaskRow, SOURCE)
        assert task_row is not None
        definition = dict(task_row.definition)
        sub_row, evaluation = session.execute(
            select(SubmissionRow, EvaluationRow)
            .join(EvaluationRow, EvaluationRow.submission_id == SubmissionRow.id)
            .where(SubmissionRow.task_id == SOURCE)
            .order_by(SubmissionRow.id)
            .limit(1)
        ).one()
        payload, scores = dict(sub_row.payload), dict(evaluation.scores)
    submissions: list[dict[str, Any]] = []
    evaluations: list[dict[str, Any]] = []
    for t in range(tasks):
        task_id = f"many-{t:03d}"
        with session_scope(url) as session:
            queries.put_task(
                session, task=Task.model_validate(definition | {"id": task_id}, context=STORED)
            )
        for m, model in enumerate(MODELS):
            sid = f"{task_id}-{model}"
            given = 1_000 * (t + 1) * (m + 1)
            tokens = given + payload["usage"]["output_tokens"]
            usage = payload["usage"] | {"input_tokens": given, "total_tokens": tokens}
            submissions.append(
                {
                    "id": sid,
                    "task_id": task_id,
                    "content_hash": f"{sid}-hash",
                    "payload": payload
                    | {"id": sid, "task_id": task_id, "model": model, "usage": usage},
                    "status": "done",
                    "tool": payload["tool"],
                    "model": model,
                    "total_tokens": tokens,
                    "tool_calls": sub_row.tool_calls,
                    "iterations": sub_row.iterations,
                    "execution_time": sub_row.execution_time,
                    "cost_usd": sub_row.cost_usd,
                }
            )
            evaluations.append(
                {
                    "submission_id": sid,
                    "task_id": task_id,
                    "status": "done",
                    "scores": scores,
                    "missing_tiers": {},
                    "baseline_version": 0,
                    "profile_hash": "0" * 64,
                }
            )
    with session_scope(url) as session:
        session.execute(insert(SubmissionRow), submissions)
        session.execute(insert(EvaluationRow), evaluations)
    return url


@pytest.mark.parametrize("baselines", [False, True])
def test_a_compare_over_many_tasks_issues_as_many_statements_as_over_a_few(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, baselines: bool
) -> None:
    counts = {}
    for tasks in (6, 60):
        url = copied_store(store, tmp_path / f"many-{tasks}.db", tasks)
        if baselines:  # half the tasks have a stored baseline, half the profile's defaults
            configure(monkeypatch, database_url=url)
            for t in range(0, tasks, 2):
                refresh_baseline(f"many-{t:03d}")
        found = {}

        def read(session: Any, found: dict[str, Any] = found) -> None:
            found["result"] = compare(session, tasks="many-*", by="model", values=list(MODELS))

        counts[tasks] = len(selects(url, read))
        result = found["result"]
        assert len(result.tasks) == tasks and len(result.units) == tasks
        # each task's value is its leaderboard's score, against that task's own baseline
        with session_scope(url) as session:
            for unit in result.units[:: max(1, tasks // 6)]:
                # the whole task ranked in Python: this store's rows were inserted behind the
                # projector, so the database's boards have no standings to rank
                board = board_of(task_view(session, task_id=unit.unit))
                shown = {e.model: e.ranking_value for e in board.entries}
                assert unit.values == pytest.approx(shown)
    assert counts[60] == counts[6] <= 8, counts
