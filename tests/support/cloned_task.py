"""A task of any size, cheaply: one stored task's evaluated runs cloned by bulk insert.

Each clone gets a new id, its usage scaled by a factor of its own and fresh digests (run,
output, shape, content), so no clone is a copy or near-copy of another; the template's tier
rows and evaluation are copied beside it. The new task then gets a real refresh
(`evalq.read.served.refresh_task`): its baseline, standings, places, tallies and figures, as a
task whose runs were merged one by one would have after its refresh (its judged runs counted
as the migration counts a store's: `evalq.store.tallies.recount_judged`).
"""

from __future__ import annotations

import random
import uuid
from typing import Any

from sqlalchemy import select

from evalq.core.schemas import Task
from evalq.read import served
from evalq.scoring.near_copy import sketch, sketch_bytes
from evalq.store import queries, tallies
from evalq.store.db import engine_for, session_scope
from evalq.store.models import (
    EvaluationRow,
    RunMetadataRow,
    SubmissionRow,
    TierResultRow,
    utcnow,
)
from evalq.store.run_metadata import entries

CHUNK = 2_000
ATTEMPTS: tuple[Any, ...] = (1, 2, "2", 2.5, True, None)
"""A clone's ``attempt`` metadata, by its index: a filter ``attempt=2`` keeps 2 and "2"."""


def template_rows(url: str, task_id: str) -> list[tuple[dict[str, Any], dict[str, Any], list[Any]]]:
    """The task's evaluated runs as stored: (run, evaluation, tier rows) each."""
    with engine_for(url).connect() as connection:
        runs = [
            dict(r._mapping)
            for r in connection.execute(
                select(SubmissionRow.__table__).where(SubmissionRow.task_id == task_id)
            )
        ]
        evaluations = {
            r.submission_id: dict(r._mapping)
            for r in connection.execute(
                select(EvaluationRow.__table__).where(EvaluationRow.task_id == task_id)
            )
        }
        ids = [r["id"] for r in runs]
        tiers: dict[str, list[Any]] = {}
        for r in connection.execute(
            select(TierResultRow.__table__).where(TierResultRow.submission_id.in_(ids))
        ):
            tiers.setdefault(r.submission_id, []).append(dict(r._mapping))
    return [
        (run, evaluations[run["id"]], tiers.get(run["id"], []))
        for run in sorted(runs, key=lambda r: r["id"])
        if run["id"] in evaluations
    ]


def own_words(output: str, index: int) -> str:
    """``output`` with a word of clone ``index``'s own after every second word, so that every
    word 3-shingle of it is the clone's own: a tag appended to the template's text would leave
    it a near-copy of the template (`evalq.scoring.near_copy`: containment of its shingles)."""
    words = output.split(" ")
    mixed = [w if i % 2 else f"{w} r{index}x{i}" for i, w in enumerate(words)]
    return " ".join(mixed) + f" (run {index})"


def own_output(run: dict[str, Any], index: int) -> dict[str, Any]:
    """The clone's output in words of its own (`bench._clone_store.own_words`): the template's
    text as it is would make every clone a near-copy of it (`evalq.scoring.near_copy`)."""
    output = run["payload"].get("output")
    return {"output": own_words(output, index)} if isinstance(output, str) and output else {}


def scaled_usage(usage: dict[str, Any], factor: float) -> dict[str, Any]:
    """A run's reported usage with its tokens and time scaled by ``factor`` (its total the sum
    of its parts, as validated)."""
    found = dict(usage)
    for key in ("total_tokens", "input_tokens", "output_tokens"):
        if isinstance(found.get(key), int):
            found[key] = max(1, round(found[key] * factor))
    if isinstance(found.get("input_tokens"), int) and isinstance(found.get("output_tokens"), int):
        found["total_tokens"] = found["input_tokens"] + found["output_tokens"]
    for key in ("execution_time", "cost_usd"):
        if isinstance(found.get(key), float | int) and found[key]:
            found[key] = round(found[key] * factor, 6)
    return found


def clone(
    template: tuple[dict[str, Any], dict[str, Any], list[Any]],
    task_id: str,
    index: int,
    rng: random.Random,
) -> tuple[dict[str, Any], dict[str, Any], list[Any]]:
    """Clone ``index`` of a template run in ``task_id``: (run, evaluation, tier rows)."""
    run, evaluation, tiers = template
    sid = f"{task_id}.{index:07d}"
    factor = rng.uniform(1.0, 1.5)
    usage = scaled_usage(run["payload"].get("usage") or {}, factor)
    # what a board filters on: values of every JSON type a filter compares as text
    metadata = dict(run["payload"].get("metadata") or {}) | {
        "attempt": ATTEMPTS[index % len(ATTEMPTS)],
        "shard": f"s{index % 3}",
    }
    new = dict(run) | {
        "id": sid,
        "task_id": task_id,
        "payload": dict(run["payload"])
        | {"id": sid, "task_id": task_id, "usage": usage, "metadata": metadata}
        | own_output(run, index),
        "copy_of": None,
        "review": None,
        "content_hash": uuid.uuid4().hex * 2,
        "run_hash": uuid.uuid4().hex * 2,
        "output_hash": uuid.uuid4().hex * 2,
        "shape_hash": uuid.uuid4().hex * 2,
        # the columns say what the payload says, as intake stores them: a board scores a run
        # from its payload, the refresh rescores its standing from these columns
        "total_tokens": usage.get("total_tokens") or max(1, round(run["total_tokens"] * factor)),
        "execution_time": usage.get("execution_time")
        if "execution_time" in usage or not run["execution_time"]
        else round(run["execution_time"] * factor, 6),
        # stored now, as a merge stores its run: the task's version moves with it
        "created_at": utcnow(),
        "updated_at": utcnow(),
    }
    if run["cost_usd"]:  # priced at submit from the scaled tokens
        new["cost_usd"] = round(run["cost_usd"] * factor, 6)
    found = sketch(new["payload"])  # its own content's, as the projector stores it at merge
    new["sketch"] = None if found is None else sketch_bytes(found)
    return (
        new,
        dict(evaluation) | {"submission_id": sid, "task_id": task_id},
        [dict(t) | {"submission_id": sid} for t in tiers],
    )


def cloned_task(url: str, *, template: str, task_id: str, size: int, seed: int = 0) -> str:
    """A new task ``task_id`` defined as ``template``, with ``size`` runs cloned from its
    evaluated runs and refreshed; returns its id."""
    rows = template_rows(url, template)
    with session_scope(url) as session:
        definition = queries.get_task(session, task_id=template).model_dump(mode="json")
        queries.put_task(session, task=Task.model_validate(definition | {"id": task_id}))
    rng = random.Random(seed)
    for start in range(0, size, CHUNK):
        runs, evaluations, tiers = [], [], []
        for index in range(start, min(size, start + CHUNK)):
            run, evaluation, tier_rows = clone(rows[index % len(rows)], task_id, index, rng)
            runs.append(run)
            evaluations.append(evaluation)
            tiers += tier_rows
        with engine_for(url).begin() as connection:
            connection.execute(SubmissionRow.__table__.insert(), runs)
            connection.execute(EvaluationRow.__table__.insert(), evaluations)
            if tiers:
                connection.execute(TierResultRow.__table__.insert(), tiers)
            # the metadata entries the merge's projector stores (`run_metadata.store`)
            found = [e for run in runs for e in entries(run["id"], run["payload"]["metadata"])]
            if found:
                connection.execute(RunMetadataRow.__table__.insert(), found)
    with session_scope(url) as session:
        served.refresh_task(session, task_id=task_id)
        # its runs were not merged here: their judged runs are counted once, as the migration
        # counts a store's
        tallies.recount_judged(session, task_id=task_id)
    return task_id
