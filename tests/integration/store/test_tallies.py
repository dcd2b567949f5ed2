"""The tallies the merge keeps in proportion to the change equal the refresh's recount of the
task, after any sequence of merges of new runs (counted or held), copies of a stored run (sent
after it, or stamped before it: the stored one becomes the copy), runs held again, runs whose
evaluation failed on a re-merge, accepts and un-accepts (SQLite and PostgreSQL); and the copies
the board reads are those the whole task's runs say."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select, update
from tests.support.cloned_task import clone, cloned_task, template_rows
from tests.support.settings import configure
from tests.support.small_board import evaluate_small_board

from evalq.read.boards import projector
from evalq.read.leaderboard import copies_of
from evalq.read.view import task_context
from evalq.store import copies, queries, tallies, task_tallies
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
ACTIONS = ("new", "new held", "copy", "earlier copy", "held again", "failed")
ACTIONS += ("accepted", "accepted", "unaccepted")


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


def counts(session: Any, task_id: str) -> dict[str, int]:
    """The task's counts as kept (those at zero left out)."""
    return {k: n for k, n in task_tallies.counts(session, task_id=task_id).items() if n}


def counted_again(session: Any, task_id: str) -> dict[str, int]:
    """What the refresh's count of the task would store (in a savepoint, rolled back)."""
    savepoint = session.begin_nested()
    task_tallies.recount(session, task_id=task_id)
    found = counts(session, task_id)
    savepoint.rollback()
    return found


def copy_of_run(
    url: str, task_id: str, template: Any, index: int, rng: random.Random, *, earlier: bool
) -> dict[str, Any]:
    """A new run with a stored evaluated run's content (a copy of it); ``earlier``: stamped
    before it, so that the stored run becomes the copy."""
    with engine_for(url).connect() as connection:
        original = (
            connection.execute(
                select(SubmissionRow.__table__)
                .where(SubmissionRow.task_id == task_id, SubmissionRow.status == "done")
                .order_by(SubmissionRow.id)
                .limit(1)
                .offset(rng.randrange(10))
            )
            .one()
            ._mapping
        )
    run, evaluation, tiers = clone(template, task_id, index, rng)
    same = ("run_hash", "shape_hash", "output_hash", "tool", "model", "total_tokens")
    run |= {name: original[name] for name in same}
    run |= {name: original[name] for name in ("tool_calls", "iterations", "execution_time")}
    run["cost_usd"] = original["cost_usd"]
    if earlier:
        run["created_at"] = original["created_at"] - timedelta(seconds=1)
    with engine_for(url).begin() as connection:
        connection.execute(SubmissionRow.__table__.insert(), [run])
        connection.execute(EvaluationRow.__table__.insert(), [evaluation])
        if tiers:
            connection.execute(TierResultRow.__table__.insert(), tiers)
    return run


def decide(url: str, task_id: str, *, accept: bool) -> None:
    """A person's accept (or un-accept) of one of the task's runs, projected as the client
    does it (`projector.project_review`); no refresh after it."""
    wanted = "flagged" if accept else "accepted"
    with session_scope(url) as session:
        sid = session.scalar(
            select(SubmissionRow.id).where(
                SubmissionRow.task_id == task_id, SubmissionRow.review == wanted
            )
        )
        if sid is None:
            return
        change = queries.accept_review if accept else queries.unaccept_review
        assert projector.project_review(session, sid, lambda: change(session, submission_id=sid))


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
        action = rng.choice(ACTIONS)
        if "copy" in action:
            run = copy_of_run(
                url,
                task_id,
                rng.choice(templates),
                1000 + step,
                rng,
                earlier=action == "earlier copy",
            )
            project(url, task_id, [run["id"]], held=[])
        elif action.startswith("new"):
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
        else:  # a person's decision, before the refresh the client runs after it
            decide(url, task_id, accept=action == "accepted")
        with session_scope(url) as session:
            assert stored(session, task_id) == recounted(session, task_id), (step, action)
            assert copies.stored(session, task_id=task_id) == copies_of(session, task_id=task_id), (
                step,
                action,
            )
            assert counts(session, task_id) == counted_again(session, task_id), (step, action)
