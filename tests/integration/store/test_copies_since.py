"""A refresh decides the copy marks of the runs submitted since its last decision only, against
the counted runs in reach of them, and finds what deciding the whole task finds; a run it had
not decided that arrives with an earlier time, or one still under way, sends it back to the
whole task (`evalq.store.review_sql._mark_copies`)."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import insert, select

from evalq.core.profile import profile_named
from evalq.core.schemas import Task
from evalq.scoring.near_copy import sketch, sketch_bytes, stored_sketch
from evalq.scoring.review import duplicates
from evalq.store import queries, review_sql
from evalq.store.db import session_scope
from evalq.store.models import SubmissionRow, TaskRefreshRow

pytestmark = pytest.mark.both_databases  # the database matters here (tests/conftest.py)

START = datetime(2026, 11, 29, tzinfo=UTC)
TEXTS = [
    "The cache is warmed before the first request and evicted by age.",
    "We rewrote the parser to stream tokens and report the line of each error.",
    "Retries back off exponentially and give up after five attempts in all.",
    "The summary table lists revenue by region and quarter with totals.",
]


def runs(task_id: str, first: int, count: int, start: datetime, rng: random.Random) -> list[dict]:
    """Runs with repeated contents, shapes and texts (some with a sentence appended) and usage
    a little or far apart: copies of every kind, among them and with earlier runs."""
    rows = []
    for index in range(first, first + count):
        text = rng.choice(TEXTS) + rng.choice(["", "", " Checked twice."])
        scale = rng.choice([1.0, 1.0, 1.02, 1.2, 1.5])
        found = sketch({"output": text})
        assert found is not None
        rows.append(
            {
                "id": f"{task_id}-{index:04d}",
                "task_id": task_id,
                "content_hash": f"{index:064d}",
                "payload": {"output": text},
                "status": rng.choice(["done", "done", "degraded", "failed"]),
                "created_at": start + timedelta(seconds=rng.randint(0, 30)),
                "run_hash": rng.choice([f"own-{task_id}-{index}", f"run-{rng.randint(0, 9)}"]),
                "output_hash": None,
                "shape_hash": rng.choice([None, f"shape-{rng.randint(0, 3)}"]),
                "sketch": rng.choice([sketch_bytes(found), None]),  # None: from the payload
                "tool": rng.choice(["aider", "codex"]),
                "model": "gpt-4o",
                "total_tokens": round(40_000 * scale),
                "tool_calls": 12,
                "iterations": 1,
                "execution_time": 300.0 * scale,
                "cost_usd": None,
            }
        )
    return rows


def add(url: str, rows: list[dict]) -> None:
    with session_scope(url) as session:
        session.execute(insert(SubmissionRow), rows)


def refresh(url: str, task_id: str) -> None:
    with session_scope(url) as session:
        review_sql.settle_reviews(session, task_id=task_id, profile=profile_named("default").arena)


def marks_and_whole(url: str, task_id: str) -> tuple[dict[str, str], dict[str, str]]:
    """The stored copy marks, and what `duplicates` of every evaluated run finds."""
    s = SubmissionRow
    with session_scope(url) as session:
        rows = session.execute(
            select(*queries.FACT_COLUMNS, s.copy_of, s.sketch, s.payload).where(
                s.task_id == task_id, s.status.in_(queries.EVALUATED)
            )
        ).all()
    facts = []
    for row in rows:
        found = stored_sketch(row.sketch) if row.sketch else sketch(row.payload)
        facts.append(replace(queries.run_facts(row), sketch=found))
    marks = {row.id: row.copy_of for row in rows if row.copy_of is not None}
    return marks, duplicates(facts)


def decided(url: str, task_id: str) -> tuple[datetime | None, int | None]:
    with session_scope(url) as session:
        progress = session.get(TaskRefreshRow, task_id)
        if progress is None or progress.copies_through is None:
            return None, None
        return progress.copies_through.replace(tzinfo=UTC), progress.copies_runs


@pytest.mark.parametrize("seed", [1, 2])
def test_runs_since_the_last_refresh_are_decided_alone_as_the_whole_task_decides_them(
    db_url: str, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    task_id = f"since-{seed}"
    with session_scope(db_url) as session:
        queries.put_task(session, task=Task(id=task_id, category="debugging"))
    first = runs(task_id, 0, 40, START, rng)
    add(db_url, first)
    refresh(db_url, task_id)
    marks, whole = marks_and_whole(db_url, task_id)
    assert marks == whole and whole
    evaluated = [r for r in first if r["status"] != "failed"]
    newest = max(r["created_at"] for r in evaluated if r["run_hash"])
    assert decided(db_url, task_id) == (newest, len(evaluated))

    # runs submitted after every decided one: decided alone (the whole task is not read)
    whole_calls: list[int] = []
    real_whole = review_sql._decide_whole

    def counted_whole(*args: object, **kwargs: object) -> dict[str, str]:
        whole_calls.append(1)
        return real_whole(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(review_sql, "_decide_whole", counted_whole)
    later = runs(task_id, 40, 40, START + timedelta(minutes=5), rng)
    add(db_url, later)
    refresh(db_url, task_id)
    assert not whole_calls
    marks, whole = marks_and_whole(db_url, task_id)
    assert marks == whole
    assert any(sid in whole for sid in (r["id"] for r in later))  # later runs repeat earlier ones
    refresh(db_url, task_id)  # nothing new: nothing changes
    assert not whole_calls and marks_and_whole(db_url, task_id) == (marks, whole)

    # a run submitted before the newest decided one arrives: the whole task again
    late = runs(task_id, 80, 1, START - timedelta(minutes=1), rng)
    late[0] |= {"status": "done", "run_hash": first[-1]["run_hash"]}
    add(db_url, late)
    refresh(db_url, task_id)
    assert whole_calls == [1]
    marks, whole = marks_and_whole(db_url, task_id)
    assert marks == whole


def test_a_run_still_under_way_keeps_the_runs_after_it_undecided(db_url: str) -> None:
    rng = random.Random(5)
    with session_scope(db_url) as session:
        queries.put_task(session, task=Task(id="waiting", category="debugging"))
    done = runs("waiting", 0, 6, START, rng)
    for offset, row in enumerate(done):
        row |= {"status": "done", "created_at": START + timedelta(seconds=10 * offset)}
    waiting = runs("waiting", 6, 1, START + timedelta(seconds=25), rng)
    waiting[0] |= {"status": "running", "created_at": START + timedelta(seconds=25)}
    add(db_url, done + waiting)
    refresh(db_url, "waiting")
    # decided through the last run before the one under way (at 20 s): the runs at 30 s and on
    # are decided again next time, when it may have arrived before them
    assert decided(db_url, "waiting") == (START + timedelta(seconds=20), 3)
