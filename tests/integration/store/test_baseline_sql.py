"""The baseline read from order statistics in the database equals the pure `compute_baseline`."""

from __future__ import annotations

import random
from typing import Any

import pytest
from sqlalchemy import event, insert, select
from tests.support.settings import configure
from tests.support.stored_runs import arena_run

from evalq.core.profile import ArenaProfile, profile_named
from evalq.core.schemas import Task
from evalq.scoring.arena import compute_baseline
from evalq.store import queries
from evalq.store.baseline_sql import sql_baseline
from evalq.store.db import engine_for, session_scope
from evalq.store.models import BaselineRow, SubmissionRow
from evalq.tasks.merge import refresh_baseline

pytestmark = pytest.mark.both_databases  # the database matters here (tests/conftest.py)

STATUSES = ("done", "degraded", "queued", "running", "failed")


def store_runs(url: str, task_id: str, rng: random.Random, size: int, *, timed: float) -> None:
    """``size`` submissions of every status, with ties, zero and missing times and costs."""
    with session_scope(url) as session:
        queries.put_task(session, task=Task(id=task_id, category="debugging"))
        rows = []
        for index in range(size):
            time = rng.choice([None, 0.0, round(rng.uniform(0.1, 900), 3)])
            cost = rng.choice([None, 0.0, rng.uniform(1e-4, 3.0)])
            rows.append(
                {
                    "id": f"{task_id}-{index}",
                    "task_id": task_id,
                    "content_hash": "0" * 64,
                    "payload": {},
                    "status": rng.choice(STATUSES),
                    "tool": "aider",
                    "model": "gpt-4o",
                    "total_tokens": rng.choice([rng.randint(1, 200_000), 5_000]),
                    "tool_calls": rng.randint(0, 60),
                    "iterations": rng.randint(1, 12),
                    "execution_time": time if rng.random() < timed else None,
                    "cost_usd": cost if rng.random() < timed else None,
                }
            )
        if rows:
            session.execute(insert(SubmissionRow), rows)


def pure_baseline(url: str, task_id: str, profile: ArenaProfile) -> dict[str, object]:
    with session_scope(url) as session:
        rows = session.scalars(
            select(SubmissionRow).where(
                SubmissionRow.task_id == task_id, SubmissionRow.status.in_(("done", "degraded"))
            )
        ).all()
        runs = [arena_run(row) for row in rows]
    return compute_baseline(runs, profile, last_updated="t").model_dump()


def database_baseline(url: str, task_id: str, profile: ArenaProfile) -> dict[str, object]:
    with session_scope(url) as session:
        baseline = sql_baseline(session, task_id=task_id, profile=profile, last_updated="t")
    return baseline.model_dump()


@pytest.mark.parametrize("min_submissions", [1, 5])
def test_sql_baseline_equals_the_pure_function_on_random_tasks(
    db_url: str, min_submissions: int
) -> None:
    # spec 000's order statistics (the robust default: store/test_agent_baseline.py)
    profile = profile_named("default").arena.model_copy(
        update={"min_submissions": min_submissions, "baseline": "runs"}
    )
    rng = random.Random(min_submissions)
    sizes = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 16, 57, 400]
    for case, size in enumerate(sizes):
        for timed in (0.0, 0.3, 1.0):  # no run timed / some / every run (zero still unmeasured)
            task_id = f"t{case}-{int(timed * 10)}"
            store_runs(db_url, task_id, rng, size, timed=timed)
            expected = pure_baseline(db_url, task_id, profile)
            assert database_baseline(db_url, task_id, profile) == expected, (size, timed)


@pytest.mark.parametrize("baseline", ["runs", "robust"])
def test_sql_baseline_reads_only_the_task_and_its_evaluated_runs(
    db_url: str, baseline: str
) -> None:
    profile = profile_named("default").arena.model_copy(
        update={"min_submissions": 1, "baseline": baseline}
    )
    rng = random.Random(7)
    store_runs(db_url, "a", rng, 40, timed=1.0)
    store_runs(db_url, "b", rng, 40, timed=1.0)
    expected = pure_baseline(db_url, "a", profile)
    with session_scope(db_url) as session:  # another task's runs and unfinished runs move nothing
        session.execute(
            insert(SubmissionRow),
            [
                {
                    "id": f"a-extra-{status}",
                    "task_id": "a",
                    "content_hash": "0" * 64,
                    "payload": {},
                    "status": status,
                    "tool": "aider",
                    "model": "gpt-4o",
                    "total_tokens": 10_000_000,
                    "tool_calls": 999,
                    "iterations": 99,
                    "execution_time": 99_999.0,
                    "cost_usd": 999.0,
                }
                for status in ("queued", "running", "failed")
            ],
        )
    result = database_baseline(db_url, "a", profile)
    assert result == expected
    assert result["max_tokens"] < 10_000_000
    assert result["submission_count"] == expected["submission_count"] > 0


def test_a_refresh_that_loses_the_race_for_its_version_number_reads_again(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two refreshes of one task overlap: the second to insert a version computes again.

    The interleaving is made exact: right before this refresh's INSERT reaches the database,
    another refresh commits the same version number from its own connection.
    """
    store_runs(db_url, "race", random.Random(3), 12, timed=1.0)
    configure(monkeypatch, database_url=db_url)
    other = {"from": "the other refresh"}
    raced: list[str] = []

    def other_refresh_commits_first(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if not raced and statement.lstrip().upper().startswith("INSERT INTO BASELINES"):
            raced.append(statement)
            with session_scope(db_url) as session:
                queries.add_baseline(session, task_id="race", data=other, submission_count=0)

    engine = engine_for(db_url)
    event.listen(engine, "before_cursor_execute", other_refresh_commits_first)
    try:
        version = refresh_baseline("race")
    finally:
        event.remove(engine, "before_cursor_execute", other_refresh_commits_first)
    assert raced  # the race happened
    with session_scope(db_url) as session:
        rows = session.scalars(
            select(BaselineRow).where(BaselineRow.task_id == "race").order_by(BaselineRow.version)
        ).all()
        stored = [(row.version, row.data) for row in rows]
    assert version == 2
    assert stored[0] == (1, other)
    expected = database_baseline(db_url, "race", profile_named("default").arena)
    assert stored[1] == (2, expected | {"last_updated": None})  # this refresh's own figures
