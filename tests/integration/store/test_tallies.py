"""The tallies the merge keeps in proportion to the change equal the refresh's recount of the
task, after any sequence of merges of new runs (counted or held), runs held again, runs whose
evaluation failed on a re-merge, and accepts (SQLite and PostgreSQL)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from sqlalchemy import select, update
from tests.support.cloned_task import clone, cloned_task, template_rows
from tests.support.settings import configure
from tests.support.small_board import evaluate_small_board

from evalq.read.boards import projector
from evalq.read.view import task_context
from evalq.store import queries, tallies
from evalq.store.db import engine_for, session_scope
from evalq.store.models import (
    AgentTallyRow,
    EvaluationRow,
    SubmissionRow,
    TierResultRow,
)

pytestmark = pytest.mark.both_databases  # the upserts' SQL differs by dialect

ARENA = "arena-frontend-dark-mode"
STEPS = 12


def stored(session: Any, task_id: str) -> list[tuple[Any, ...]]:
    rows = session.scalars(
        select(AgentTallyRow)
        .where(AgentTallyRow.task_id == task_id)
        .order_by(AgentTallyRow.tool, AgentTallyRow.model)
    )
    return [
        tuple(getattr(r, c.name) for c in AgentTallyRow.__table__.columns)
        for r in rows
        if r.done + r.degraded or r.counted or r.held
    ]


def recounted(session: Any, task_id: str) -> list[tuple[Any, ...]]:
    """What the refresh's recount would store (in a savepoint, rolled back)."""
    savepoint = session.begin_nested()
    tallies.recount(session, task_id=task_id)
    found = stored(session, task_id)
    savepoint.rollback()
    return found


def project(url: str, task_id: str, sids: list[str], *, held: list[str]) -> None:
    with session_scope(url) as session:
        context = task_context(session, task_id=task_id)
        loaded = queries.evaluations_of(session, submission_ids=sids)
        projector.project_runs(session, {task_id: context}, [loaded[s] for s in sids], held=held)


@pytest.fixture
def examples(db_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The Arena example task's 12 runs, merged for real (`evaluate_small_board`)."""
    monkeypatch.delenv("EVALQ_BROKER_URL", raising=False)
    configure(monkeypatch, database_url=db_url)
    evaluate_small_board(db_url)
    return db_url


@pytest.mark.parametrize("seed", [1, 2])
def test_tallies_kept_at_merge_equal_a_recount(examples: str, seed: int) -> None:
    url = examples
    task_id = cloned_task(url, template=ARENA, task_id=f"tallied-{seed}", size=40, seed=seed)
    templates = template_rows(url, ARENA)
    rng = random.Random(seed)
    for step in range(STEPS):
        with session_scope(url) as session:
            ids = list(
                session.scalars(select(SubmissionRow.id).where(SubmissionRow.task_id == task_id))
            )
        action = rng.choice(["new", "new held", "held again", "failed", "accepted"])
        if action.startswith("new"):
            run, evaluation, tiers = clone(rng.choice(templates), task_id, 1000 + step, rng)
            with engine_for(url).begin() as connection:
                connection.execute(SubmissionRow.__table__.insert(), [run])
                connection.execute(EvaluationRow.__table__.insert(), [evaluation])
                if tiers:
                    connection.execute(TierResultRow.__table__.insert(), tiers)
            project(url, task_id, [run["id"]], held=[run["id"]] if "held" in action else [])
        elif action == "held again":
            sid = rng.choice(ids)
            project(url, task_id, [sid], held=[sid])
        elif action == "failed":
            sid = rng.choice(ids)
            with session_scope(url) as session:
                session.execute(
                    update(EvaluationRow)
                    .where(EvaluationRow.submission_id == sid)
                    .values(status="failed")
                )
                session.execute(
                    update(SubmissionRow).where(SubmissionRow.id == sid).values(status="failed")
                )
            project(url, task_id, [sid], held=[])
        else:  # a person's accept (the client refreshes the task after it: a recount)
            with session_scope(url) as session:
                flagged = session.scalar(
                    select(SubmissionRow.id).where(
                        SubmissionRow.task_id == task_id, SubmissionRow.review == "flagged"
                    )
                )
            if flagged is not None:
                with session_scope(url) as session:
                    queries.accept_review(session, submission_id=flagged)
                    tallies.recount(session, task_id=task_id)
        with session_scope(url) as session:
            assert stored(session, task_id) == recounted(session, task_id), (step, action)
