"""An agent's standing (how many tasks it ran) is read by the robust and agent-weighted Arena
baselines of every task it ran: the crowd is the names below the task's typical standing, the
new names those seen on no other task. So a merge that gives an agent its first evaluated run
on a task claims the refresh of its other Arena tasks too, once each; a run that moves no
standing claims only its own task's. Before, those baselines stayed as they were until a run
of their own task came: on a busy machine the demo's Arena boards ended ranked against a
crowd drawn before the other tasks' runs had merged (stop 58's CI)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import select, update

from evalq.core.schemas import Task, parse_submission
from evalq.core.settings import get_settings
from evalq.producer.cli.demo import EXAMPLES
from evalq.read.baseline import current_baseline
from evalq.read.served import refresh_task
from evalq.service.evaluated import Recorded, record_evaluation
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.store.models import SubmissionRow, TaskRow

pytestmark = pytest.mark.both_databases  # the tallies and the claims are SQL

X, Y = "arena-frontend-dark-mode", "arena-debug-flaky-date-parser"


def examples(kind: str) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """The bundled task definitions by id, and the first bundled run of ``kind``."""
    tasks = {t["id"]: t for t in json.loads((EXAMPLES / "tasks.json").read_text())}
    return tasks, json.loads((EXAMPLES / f"{kind}.jsonl").read_text().splitlines()[0])


def merged(url: str, task_id: str, run_id: str, agent: tuple[str, str]) -> Recorded:
    """Store one run of ``agent`` on ``task_id`` (an Arena example's content, its own output)
    and merge it as the chord's merge does, claims included."""
    _, line = examples("arena")
    tool, model = agent
    run = line | {"id": run_id, "task_id": task_id, "tool": tool, "model": model}
    return merge_line(url, run | {"output": f"{line['output']} ({run_id})"})


def merge_line(url: str, run: dict[str, Any]) -> Recorded:
    """Store ``run`` (once) and merge it as the chord's merge does (no tiers), claims included."""
    with session_scope(url) as session:
        if session.get(SubmissionRow, run["id"]) is None:
            queries.add_submission(session, submission=parse_submission(run), cost_usd=None)
    with session_scope(url) as session:
        job = queries.load_job(session, submission_id=run["id"])
        current = current_baseline(session, task_id=job.task.id, profile=job.profile)
        return record_evaluation(session, job, {}, current)


def drain(url: str) -> None:
    """Run the refreshes the merges claimed, as the worker does."""
    for task_id in sorted(scheduled(url)):
        with session_scope(url) as session:
            refresh_task(session, task_id=task_id, settings=get_settings())


def stored_baseline(url: str, task_id: str) -> dict[str, Any]:
    """The task's current baseline figures (not when they were drawn)."""
    with session_scope(url) as session:
        row = queries.current_baseline(session, task_id=task_id)
        assert row is not None
        return {k: v for k, v in row.data.items() if k != "last_updated"}


def scheduled(url: str) -> set[str]:
    """The tasks whose refresh is claimed; then every claim released, as a refresh starting
    releases its own."""
    with session_scope(url) as session:
        found = set(session.scalars(select(TaskRow.id).where(TaskRow.refresh_scheduled)))
        session.execute(update(TaskRow).values(refresh_scheduled=False))
    return found


def test_a_merge_that_moves_an_agents_standing_claims_its_other_arena_tasks(db_url: str) -> None:
    tasks, _ = examples("arena")
    _, scylla_line = examples("scylla")
    scylla = scylla_line["task_id"]
    with session_scope(db_url) as session:
        for task_id in (X, Y, scylla):
            queries.put_task(session, task=Task.model_validate(tasks[task_id]))
    a, b = ("tool-a", "model-a"), ("tool-b", "model-b")

    first = merged(db_url, X, "x-a-1", a)
    assert first.status in ("done", "degraded")  # evaluated: it has a standing
    assert (first.refresh, first.refresh_also) == (True, ())
    assert scheduled(db_url) == {X}

    # a's first run on Y: Y's own refresh, and X's, whose baseline reads a's standing
    on_y = merged(db_url, Y, "y-a-1", a)
    assert (on_y.refresh, on_y.refresh_also) == (True, (X,))
    assert scheduled(db_url) == {X, Y}

    # a's second run on Y moves no standing: Y's refresh alone
    again = merged(db_url, Y, "y-a-2", a)
    assert (again.refresh, again.refresh_also) == (True, ())
    assert scheduled(db_url) == {Y}

    # the same run merged again (a redelivered chord) moves nothing either
    assert merged(db_url, Y, "y-a-1", a).refresh_also == ()
    scheduled(db_url)

    # b's first run anywhere: no other task reads b's standing yet
    assert merged(db_url, Y, "y-b-1", b).refresh_also == ()
    scheduled(db_url)

    # b's first run on X: Y reads b's standing now
    assert merged(db_url, X, "x-b-1", b).refresh_also == (Y,)
    scheduled(db_url)

    # a run on a Scylla task moves a's standing: its Arena tasks are claimed, and a claim
    # already held is not claimed twice (the debounce)
    with session_scope(db_url) as session:
        assert queries.claim_refresh(session, task_id=X)
    on_scylla = merged(db_url, scylla, "s-a-1", a)
    assert on_scylla.refresh_also == (Y,)  # X's refresh was already scheduled
    assert scheduled(db_url) == {X, Y, scylla}

    # and a run on X by a, whose standing it does not move, claims no Scylla task
    assert merged(db_url, X, "x-a-2", a).refresh_also == ()


def test_each_arena_baseline_is_current_after_the_claimed_refreshes_whatever_the_order(
    db_url: str,
) -> None:
    """The demo's runs merged in an order a busy machine may merge them: every run but the
    other tasks' runs of X's fast cheap agent (cursor / gpt-4o), refreshed, then those. Until
    they came that agent had fewer tasks than X's typical agent, so X's robust ranges left its
    runs out (narrower ranges: the tie of arena-fe-03 / -04 led X's board at 95.96, as stop
    58's CI saw). Once the refreshes the merges claimed have run, every Arena task's stored
    baseline is the one a refresh draws now."""
    tasks, _ = examples("arena")
    with session_scope(db_url) as session:
        for task in tasks.values():
            queries.put_task(session, task=Task.model_validate(task))
    runs = [
        json.loads(line)
        for kind in ("arena", "scylla", "peerread", "suite")
        for line in (EXAMPLES / f"{kind}.jsonl").read_text().splitlines()
        if line.strip()
    ]
    fast = ("cursor", "gpt-4o")  # arena-fe-11's agent
    late = [r for r in runs if (r.get("tool"), r.get("model")) == fast and r["task_id"] != X]
    assert late, "the demo's cursor / gpt-4o runs on other tasks"
    for run in (r for r in runs if r not in late):
        merge_line(db_url, run)
    drain(db_url)
    early = stored_baseline(db_url, X)
    for run in late:
        merge_line(db_url, run)
    drain(db_url)
    arena = sorted({r["task_id"] for r in runs if r["task_id"].startswith("arena-")})
    settled = {task_id: stored_baseline(db_url, task_id) for task_id in arena}
    assert settled[X] != early  # the late runs moved X's crowd, and X was refreshed for it
    for task_id in arena:  # a refresh now changes nothing: each was drawn from the final runs
        with session_scope(db_url) as session:
            refresh_task(session, task_id=task_id, settings=get_settings())
    assert {task_id: stored_baseline(db_url, task_id) for task_id in arena} == settled
