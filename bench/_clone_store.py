"""Stores of real merged runs at any size: the bundled examples merged once, then cloned.

`merged_examples` runs `evalq demo` (the whole pipeline in one process, no broker) on a SQLite
file: every bundled task (three Arena tasks, PeerRead, Scylla, a suite) with its runs merged
for real, tier rows and traces included. `read_examples` reads that store back, and
`add_clones` gives a store new tasks, one per example task, each with ``size`` runs cloned from
the example's: new ids, usage scaled by a random factor of at least 1 (so the Arena
dimensions, costs and copy digests differ, and no usage falls under its trace's), the output
text marked with the clone's number and every digest (run, output, shape) computed afresh, so
no clone is a copy or near-copy of another (`left_out` counts them: ~0), the kind's headline
scores jittered, the example's tier rows and evaluation copied alongside. Rows are read and
written through the store's own tables (`evalq.store.models`), so a column added there is
copied too; the example's held runs stay held, as about one Arena run in twelve is. Inserts go
in chunks of `CHUNK` runs, one executemany per table, so a 100,000-run task is stored in a
minute or two; each new task then gets a real baseline refresh.
"""

from __future__ import annotations

import json
import random
import subprocess
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from _common import evalq_env
from tests.support.cloned_task import own_words
from tests.support.processes import EVALQ

CHUNK = 2_000
"""Runs per transaction while cloning (three statements: runs, tier rows, evaluations)."""
USAGE = ("input_tokens", "output_tokens", "total_tokens", "tool_calls", "iterations")
ARENA_SCORES = ("overall_score", "unadjusted_score", "efficiency_score", "speed_score")


@dataclass(frozen=True)
class Example:
    """One example task as merged: its definition, its kind and its runs' stored rows."""

    task: dict[str, Any]
    kind: str
    runs: list[dict[str, Any]]
    tiers: dict[str, list[dict[str, Any]]]
    evaluations: dict[str, dict[str, Any]]


def merged_examples(workdir: Path) -> str:
    """A SQLite store of the bundled examples, each run merged for real (`evalq demo`)."""
    path = workdir / "examples.db"
    url = f"sqlite:///{path}"
    log = workdir / "demo.log"
    with log.open("wb") as out:
        done = subprocess.run(
            [EVALQ, "demo"], env=evalq_env(database_url=url), stdout=out, stderr=out, check=False
        )
    if done.returncode:
        raise RuntimeError(f"evalq demo failed:\n{log.read_text(errors='replace')[-3000:]}")
    return url


def read_examples(url: str) -> list[Example]:
    """Every task of the store at ``url`` with its evaluated runs, as stored (a task with none
    is left out: there is nothing to clone)."""
    from sqlalchemy import select

    from evalq.store.db import engine_for
    from evalq.store.models import EvaluationRow, SubmissionRow, TaskRow, TierResultRow

    with engine_for(url).connect() as connection:

        def rows(model: Any) -> list[dict[str, Any]]:
            return [dict(r._mapping) for r in connection.execute(select(model.__table__))]

        tasks, runs = rows(TaskRow), rows(SubmissionRow)
        tiers, evaluations = rows(TierResultRow), rows(EvaluationRow)
    engine_for(url).dispose()
    by_run: dict[str, list[dict[str, Any]]] = {}
    for tier in tiers:
        by_run.setdefault(tier["submission_id"], []).append(tier)
    evaluated = {e["submission_id"]: e for e in evaluations}
    examples = []
    for task in sorted(tasks, key=lambda t: t["id"]):
        mine = sorted(
            (r for r in runs if r["task_id"] == task["id"] and r["id"] in evaluated),
            key=lambda r: r["id"],
        )
        if not mine:
            continue
        kind = evaluated[mine[0]["id"]]["scores"]["kind"]
        examples.append(
            Example(
                task=task,
                kind=kind,
                runs=mine,
                tiers={r["id"]: by_run.get(r["id"], []) for r in mine},
                evaluations={r["id"]: evaluated[r["id"]] for r in mine},
            )
        )
    return examples


def clone_task_id(example: Example, size: int) -> str:
    return f"{example.task['id']}-n{size}"


def clone_run_id(task_id: str, index: int) -> str:
    return f"{task_id}.{index:06d}"


def add_clones(url: str, examples: list[Example], size: int) -> dict[str, str]:
    """A new task per example with ``size`` cloned runs; the new task ids by example task id.

    Each new task is put through `queries.put_task` and gets a real baseline refresh after its
    runs are stored (`refresh_baseline`, which needs this process's settings pointing at
    ``url``).
    """
    from sqlalchemy import text

    from evalq.core.schemas import Task
    from evalq.store import queries, tallies
    from evalq.store.db import engine_for, session_scope
    from evalq.tasks.merge import refresh_baseline

    created = {}
    for example in examples:
        task_id = clone_task_id(example, size)
        definition = dict(example.task["definition"]) | {"id": task_id}
        with session_scope(url) as session:
            queries.put_task(session, task=Task.model_validate(definition))
        rng = random.Random(f"{task_id}")
        for start in range(0, size, CHUNK):
            store_clones(url, example, task_id, range(start, min(size, start + CHUNK)), rng)
        refresh_baseline(task_id)
        with session_scope(url) as session:  # not merged here: counted once, as a migration
            tallies.recount_judged(session, task_id=task_id)
        created[example.task["id"]] = task_id
        copies, held = left_out(url, task_id)
        print(f"#   {task_id}: {size:,} runs, {copies:,} copies or near-copies, {held:,} held")
    if url.startswith("postgresql"):  # what autovacuum does in steady state
        with engine_for(url).connect() as connection:
            connection.execution_options(isolation_level="AUTOCOMMIT")
            connection.execute(text("VACUUM ANALYZE"))
    return created


def left_out(url: str, task_id: str) -> tuple[int, int]:
    """How many of the task's runs its refresh marked as copies (or near-copies), and how many
    are held for review: the runs its board leaves out (~0 for distinct clones, beyond the
    templates' own held runs)."""
    from sqlalchemy import func, select

    from evalq.store.db import session_scope
    from evalq.store.models import SubmissionRow as S

    with session_scope(url) as session:
        copies = session.scalar(
            select(func.count()).where(S.task_id == task_id, S.copy_of.is_not(None))
        )
        held = session.scalar(
            select(func.count()).where(S.task_id == task_id, S.review == "flagged")
        )
    return int(copies or 0), int(held or 0)


def store_clones(
    url: str,
    example: Example,
    task_id: str,
    indexes: range,
    rng: random.Random,
    *,
    status: str | None = None,
    after: datetime | None = None,
) -> list[str]:
    """Store the clones ``indexes`` of ``example``'s runs in task ``task_id``, evaluated (or
    with ``status`` and without an evaluation: ready for a real merge); their ids. Submitted a
    second apart up to now, or, ``after`` a time, a millisecond apart from it."""
    from evalq.store.db import engine_for
    from evalq.store.models import EvaluationRow, RunMetadataRow, SubmissionRow, TierResultRow
    from evalq.store.run_metadata import entries

    runs, tiers, evaluations = [], [], []
    now = datetime.now(UTC)
    count = len(example.runs)
    for index in indexes:
        template = example.runs[index % count]
        run, factor = clone_run(template, task_id, index, count, rng)
        run["updated_at"] = run["created_at"] = (
            now - timedelta(seconds=indexes.stop - index)
            if after is None
            else after + timedelta(milliseconds=index - indexes.start + 1)
        )
        if status:
            run["status"] = status
        runs.append(run)
        tiers += [t | {"submission_id": run["id"]} for t in example.tiers[template["id"]]]
        if not status:
            evaluation = example.evaluations[template["id"]]
            scores = clone_scores(evaluation["scores"], run, factor, rng)
            evaluations.append(
                evaluation
                | {
                    "submission_id": run["id"],
                    "task_id": task_id,
                    "scores": scores,
                    "evaluated_at": run["updated_at"],
                }
            )
    with engine_for(url).begin() as connection:
        connection.execute(SubmissionRow.__table__.insert(), runs)
        if tiers:
            connection.execute(TierResultRow.__table__.insert(), tiers)
        if evaluations:
            connection.execute(EvaluationRow.__table__.insert(), evaluations)
        # the metadata entries a board filters on, as the merge's projector stores them
        found = [e for run in runs for e in entries(run["id"], run["payload"].get("metadata"))]
        if found:
            connection.execute(RunMetadataRow.__table__.insert(), found)
    return [r["id"] for r in runs]


def clone_run(
    template: dict[str, Any], task_id: str, index: int, count: int, rng: random.Random
) -> tuple[dict[str, Any], float]:
    """The stored row of clone ``index`` of ``template``, and the factor its usage was scaled by.

    Scylla runs keep their variant and get run indexes of their own (a clone of the tenth run
    of T0 in the second round is run 19 of T0).
    """
    from evalq.core.schemas import run_digests, shape_digest, trace_bounds
    from evalq.scoring.near_copy import sketch, sketch_bytes

    sid = clone_run_id(task_id, index)
    # at least the template's usage: a clone below what its trace shows would be held for
    # review (`trace_bounds`), which the template was not
    factor = rng.uniform(1.0, 2.0)
    payload = json.loads(json.dumps(template["payload"]))
    payload |= {"id": sid, "task_id": task_id}
    usage = payload.get("usage") or {}
    for key in USAGE:
        if isinstance(usage.get(key), int):
            usage[key] = max(1, round(usage[key] * factor))
    if isinstance(usage.get("input_tokens"), int) and isinstance(usage.get("output_tokens"), int):
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]  # as validated
    for key in ("execution_time", "cost_usd"):
        if isinstance(usage.get(key), float | int):
            usage[key] = round(usage[key] * factor, 6)
    if isinstance(payload.get("output"), str) and payload["output"]:
        payload["output"] = own_words(payload["output"], index)
    run = dict(template) | {"id": sid, "task_id": task_id, "payload": payload, "copy_of": None}
    if template.get("run_index") is not None:
        run["run_index"] = payload["run_index"] = template["run_index"] + 10 * (index // count)
    # every digest of the clone's own content: a clone is a distinct run, never a copy or a
    # near-copy of its template or of another clone (`shape_hash` is its output's own shape)
    run["run_hash"], run["output_hash"] = run_digests(payload)
    run["shape_hash"] = shape_digest(payload)
    found = sketch(payload)  # as the projector stores it at a real merge
    run["sketch"] = None if found is None else sketch_bytes(found)
    run["trace_seconds"], run["trace_steps"] = trace_bounds(payload)
    run["content_hash"] = uuid.uuid4().hex * 2
    for key in ("total_tokens", "tool_calls", "iterations", "execution_time", "cost_usd"):
        if usage.get(key) is not None:
            run[key] = usage[key]
        elif isinstance(template[key], float):  # priced at submit from the scaled tokens
            run[key] = round(template[key] * factor, 6)
    return run, factor


def clone_scores(
    scores: dict[str, Any], run: dict[str, Any], factor: float, rng: random.Random
) -> dict[str, Any]:
    """The example's score document for a clone: ids, costs and the kind's headline scores
    moved (clamped to their ranges), everything else as merged."""
    scores = json.loads(json.dumps(scores))
    jitter = rng.uniform(0.8, 1.05)

    def moved(value: float | None, top: float) -> float | None:
        return None if value is None else round(min(top, max(0.0, value * jitter)), 6)

    if arena := scores.get("arena"):
        arena |= {"submission_id": run["id"], "task_id": run["task_id"]}
        arena |= {key: moved(arena.get(key), 100.0) for key in ARENA_SCORES if key in arena}
    if peerread := scores.get("peerread"):
        peerread["composite"] = moved(peerread.get("composite"), 1.0)
    if scylla := scores.get("scylla"):
        scylla["impl_rate"] = moved(scylla.get("impl_rate"), 1.0)
        if scylla.get("pass_rate") is not None and scylla["impl_rate"] is not None:
            scylla["composite"] = (scylla["pass_rate"] + scylla["impl_rate"]) / 2
        for key in ("cost_usd", "cost_of_pass", "duration_seconds"):
            if isinstance(scylla.get(key), float | int):
                scylla[key] = round(scylla[key] * factor, 6)
        scylla["run_index"] = run.get("run_index")
    if suite := scores.get("suite"):
        suite["final_score"] = moved(suite.get("final_score"), 1.0)
    if (cost := scores.get("cost")) and cost.get("usd") is not None:
        cost["usd"] = run["cost_usd"] if run["cost_usd"] is not None else cost["usd"] * factor
    return scores
