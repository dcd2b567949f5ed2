"""The agent-weighted baselines (``arena.baseline = "agents"``, and ``"robust"``, the default)
computed in the database equal the pure `compute_baseline` on random tasks of many agents, under
either usage rule (``arena.usage``: any run, or only runs whose usage was collected), on SQLite
and PostgreSQL."""

from __future__ import annotations

import random

import pytest
from sqlalchemy import insert, select
from tests.support.stored_runs import arena_run

from evalq.core.profile import ArenaProfile, profile_named
from evalq.core.schemas import Task
from evalq.scoring.arena import compute_baseline
from evalq.scoring.arena.baseline import Agent
from evalq.store import queries, tallies
from evalq.store.baseline_sql import sql_baseline
from evalq.store.db import session_scope
from evalq.store.models import StandingRow, SubmissionRow
from evalq.store.queries import EVALUATED

pytestmark = pytest.mark.both_databases  # the database matters here (tests/conftest.py)

STATUSES = ("done", "done", "degraded", "queued", "failed")


def store_runs(url: str, task_id: str, rng: random.Random, size: int, agents: int) -> None:
    """``size`` runs of every status from ``agents`` agents (some tools share a model, some
    agents send one run and some many), with ties, zero and missing times and costs; some runs
    held for review or marked copies."""
    names = [  # about half the agents run only this task: new names, a crowd when >= 3
        (f"tool-{rng.randint(0, 3)}", f"model-{i}" if rng.random() < 0.5 else f"{task_id}-{i}")
        for i in range(agents)
    ]
    weights = [rng.choice([1, 1, 5, 30]) for _ in names]
    with session_scope(url) as session:
        queries.put_task(session, task=Task(id=task_id, category="debugging"))
        rows = []
        for index in range(size):
            tool, model = rng.choices(names, weights)[0]
            rows.append(
                {
                    "id": f"{task_id}-{index}",
                    "task_id": task_id,
                    "content_hash": "0" * 64,
                    "payload": {},
                    "status": rng.choice(STATUSES),
                    "tool": tool,
                    "model": model,
                    "total_tokens": rng.choice([rng.randint(1, 200_000), 5_000]),
                    "tool_calls": rng.randint(0, 60),
                    "iterations": rng.randint(1, 12),
                    "execution_time": rng.choice([None, 0.0, round(rng.uniform(0.1, 900), 3)]),
                    "cost_usd": rng.choice([None, 0.0, rng.uniform(1e-4, 3.0)]),
                    "review": rng.choice([None, None, None, "flagged", "accepted"]),
                    "copy_of": rng.choice([None] * 9 + [f"{task_id}-0"]),
                    "trace_provenance": rng.choice([None, "submitted", "collected", "collected"]),
                }
            )
        if rows:
            session.execute(insert(SubmissionRow), rows)
            # what the projector keeps at merge: each evaluated run's standing (its ranking
            # values are not read here) and the agents' tallies counted from them
            standings = [
                {
                    "submission_id": row["id"],
                    "task_id": task_id,
                    "basis": "b",
                    "task_hash": "0" * 64,
                    "status": row["status"],
                }
                for row in rows
                if row["status"] in EVALUATED
            ]
            if standings:
                session.execute(insert(StandingRow), standings)
        tallies.recount(session, task_id=task_id)


def pure_baseline(url: str, task_id: str, profile: ArenaProfile) -> dict[str, object]:
    """Every run of the store read into Python, the new agents found there, then the pure
    function: the reference the database computation must equal."""
    with session_scope(url) as session:
        rows = session.scalars(select(SubmissionRow)).all()
        counted = [
            arena_run(r)
            for r in rows
            if r.task_id == task_id
            and r.status in EVALUATED
            and r.review != "flagged"
            and r.copy_of is None
        ]
        tasks_of: dict[Agent, set[str]] = {}
        for r in rows:
            if r.status in EVALUATED:
                tasks_of.setdefault((r.tool, r.model), set()).add(r.task_id)
    if profile.usage == "traced":  # as compute_baseline leaves them out: the agents that count
        counted = [run for run in counted if run.usage_collected]
    agents = {(run.tool, run.model) for run in counted}
    standings = {agent: len(tasks_of[agent]) for agent in agents}
    new = {a for a, n in standings.items() if n == 1} if len(agents) > 1 else set()
    found = compute_baseline(
        counted, profile, last_updated="t", new_agents=new, standings=standings
    )
    return found.model_dump()


def database_baseline(url: str, task_id: str, profile: ArenaProfile) -> dict[str, object]:
    with session_scope(url) as session:
        return sql_baseline(
            session, task_id=task_id, profile=profile, last_updated="t"
        ).model_dump()


@pytest.mark.parametrize(
    ("baseline", "usage", "min_submissions"),
    [("agents", "any", 1), ("agents", "any", 5), ("robust", "any", 1), ("robust", "any", 5),
     ("robust", "traced", 1), ("runs", "traced", 5)],
)  # fmt: skip
def test_the_agent_baseline_in_sql_equals_the_pure_function_on_random_tasks(
    db_url: str, baseline: str, usage: str, min_submissions: int
) -> None:
    profile = profile_named("default").arena.model_copy(
        update={"min_submissions": min_submissions, "baseline": baseline, "usage": usage}
    )
    rng = random.Random(min_submissions)
    cases = [(0, 1), (1, 1), (3, 2), (6, 3), (9, 2), (17, 5), (40, 8), (120, 12), (400, 30)]
    for index, (size, agents) in enumerate(cases):
        store_runs(db_url, f"t{index}", rng, size, agents)
    for index, (size, agents) in enumerate(cases):  # every task's agents may run the others
        expected = pure_baseline(db_url, f"t{index}", profile)
        assert database_baseline(db_url, f"t{index}", profile) == expected, (size, agents)


def test_the_spec_baseline_reads_every_run(db_url: str) -> None:
    """A profile that selects spec 000's baseline reads every run, with many agents on the task."""
    profile = profile_named("default").arena.model_copy(update={"baseline": "runs"})
    assert profile_named("default").arena.baseline == "robust"
    store_runs(db_url, "spec", random.Random(11), 200, 9)
    with session_scope(db_url) as session:
        rows = session.scalars(select(SubmissionRow)).all()
        counted = [
            arena_run(r)
            for r in rows
            if r.status in EVALUATED and r.review != "flagged" and r.copy_of is None
        ]
    expected = compute_baseline(counted, profile, last_updated="t").model_dump()
    assert database_baseline(db_url, "spec", profile) == expected
