"""A refresh's review decisions, taken in the database, equal the pure `evalq.scoring.review`'s
over the task's whole set of runs: the copies, the held runs and their flags."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import insert, select, update

from evalq.core.profile import profile_named
from evalq.core.schemas import Task
from evalq.scoring.review import duplicates, review_flags
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.store.models import SubmissionRow
from evalq.store.review_sql import settle_reviews

pytestmark = pytest.mark.both_databases  # the database matters here (tests/conftest.py)

STATUSES = ("done", "done", "degraded", "queued", "failed")
START = datetime(2026, 11, 24, tzinfo=UTC)


def store_runs(url: str, task_id: str, rng: random.Random, size: int) -> None:
    """Runs with repeated contents (some under the same timestamp), outputs shared between
    agents, enough tiny, fast, one-call runs to be outliers, and runs claiming a few ms."""
    rows = []
    for index in range(size):
        rows.append(
            {
                "id": f"{task_id}-{index:04d}",
                "task_id": task_id,
                "content_hash": f"{index:064d}",
                "payload": {},
                "status": rng.choice(STATUSES),
                "created_at": START + timedelta(seconds=rng.randint(0, size // 3)),
                "run_hash": rng.choice([None, *(f"run-{k}" for k in range(size // 2 + 1))]),
                "output_hash": rng.choice([None, *(f"out-{k}" for k in range(size // 3 + 1))]),
                "tool": rng.choice(["aider", "codex", "goose"]),
                "model": rng.choice(["gpt-4o", "o3"]),
                "total_tokens": rng.choice([rng.randint(1, 500), rng.randint(1_000, 90_000)]),
                "tool_calls": rng.choice([1, rng.randint(0, 30)]),
                "iterations": 1,
                "execution_time": rng.choice(
                    [None, 0.0, rng.uniform(0.1, 20), 600.0, rng.uniform(0.001, 0.01)]
                ),
                "cost_usd": None,
            }
        )
    with session_scope(url) as session:
        queries.put_task(session, task=Task(id=task_id, category="debugging"))
        if rows:
            session.execute(insert(SubmissionRow), rows)


def stored(url: str, task_id: str) -> tuple[dict[str, str], set[str], list[object]]:
    """The copy marks and the flagged runs as stored, and the facts the pure functions read."""
    with session_scope(url) as session:
        rows = session.execute(
            select(SubmissionRow.copy_of, SubmissionRow.review, *queries.FACT_COLUMNS).where(
                SubmissionRow.task_id == task_id, SubmissionRow.status.in_(queries.EVALUATED)
            )
        ).all()
    copies = {row.id: row.copy_of for row in rows if row.copy_of is not None}
    flagged = {row.id for row in rows if row.review == "flagged"}
    return copies, flagged, [queries.run_facts(row) for row in rows]


def test_the_database_decides_as_the_pure_functions_on_random_tasks(db_url: str) -> None:
    profile = profile_named("default").arena
    rng = random.Random(25)
    seen = {"copies": 0, "flagged": 0, "copied_output": 0}
    for case, size in enumerate([0, 1, 2, 5, 9, 30, 120]):
        task_id = f"t{case}"
        store_runs(db_url, task_id, rng, size)
        with session_scope(db_url) as session:
            returned = settle_reviews(session, task_id=task_id, profile=profile)
        copies, flagged, facts = stored(db_url, task_id)
        assert copies == returned == duplicates(facts), task_id
        decided = review_flags(facts, profile)
        assert flagged == set(decided), task_id
        seen["copies"] += len(copies)
        seen["flagged"] += len(flagged)
        seen["copied_output"] += sum("copied_output" in flags for flags in decided.values())
    assert min(seen.values()) > 3, seen  # each decision was exercised


def test_a_second_refresh_releases_and_unmarks_what_no_longer_holds(db_url: str) -> None:
    profile = profile_named("default").arena
    store_runs(db_url, "t", random.Random(7), 60)
    with session_scope(db_url) as session:
        settle_reviews(session, task_id="t", profile=profile)
    copies, flagged, _ = stored(db_url, "t")
    assert copies and flagged
    # Every run gets a content and an output of its own, and ordinary usage.
    with session_scope(db_url) as session:
        for sid in session.scalars(select(SubmissionRow.id).where(SubmissionRow.task_id == "t")):
            session.execute(
                update(SubmissionRow)
                .where(SubmissionRow.id == sid)
                .values(
                    run_hash=f"own-{sid}",
                    output_hash=f"own-{sid}",
                    total_tokens=40_000,
                    tool_calls=12,
                    execution_time=300.0,
                )
            )
    with session_scope(db_url) as session:
        assert settle_reviews(session, task_id="t", profile=profile) == {}
    assert stored(db_url, "t")[:2] == ({}, set())
