"""A task's kind is stored (issue 44, item 4): named by its definition, or derived from its runs
as they merge (a suite gate -> suite, a variant -> scylla), settled again by the refresh; the
tasks page reads it and never probes the runs; migration 0020_task_kind fills it for the
tasks already stored, as `derive_kind` decides."""

from __future__ import annotations

import json
from typing import Any

import pytest
from alembic import command
from sqlalchemy import event, select, text, update

from evalq.core.schemas import Task, parse_submission
from evalq.producer.cli.demo import EXAMPLES
from evalq.read.baseline import current_baseline
from evalq.service.evaluated import record_evaluation
from evalq.store import queries
from evalq.store.db import engine_for, migrations_config, session_scope
from evalq.store.models import SubmissionRow, TaskRow

pytestmark = pytest.mark.both_databases  # the kind is written and read in SQL


def example(kind: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A bundled task definition of ``kind`` and one of its submissions (JSON)."""
    line = json.loads((EXAMPLES / f"{kind}.jsonl").read_text().splitlines()[0])
    tasks = {t["id"]: t for t in json.loads((EXAMPLES / "tasks.json").read_text())}
    return tasks[line["task_id"]], line


def merge_run(url: str, task_id: str, line: dict[str, Any], run_id: str) -> None:
    """Store one run and merge it as the chord's merge does (no tiers: none configured)."""
    with session_scope(url) as session:
        submission = parse_submission(line | {"id": run_id, "task_id": task_id})
        queries.add_submission(session, submission=submission, cost_usd=None)
    with session_scope(url) as session:
        job = queries.load_job(session, submission_id=run_id)
        current = current_baseline(session, task_id=task_id, profile=job.profile)
        record_evaluation(session, job, {}, current, claim_refresh=False)


def stored_kind(url: str, task_id: str) -> str:
    with session_scope(url) as session:
        return str(session.scalar(select(TaskRow.kind).where(TaskRow.id == task_id)))


def test_a_named_kind_is_stored_with_the_task(db_url: str) -> None:
    definition, _ = example("arena")
    with session_scope(db_url) as session:
        queries.put_task(session, task=Task.model_validate(definition | {"kind": "peerread"}))
    assert stored_kind(db_url, definition["id"]) == "peerread"


def test_a_task_naming_no_kind_takes_the_kind_its_first_merged_run_shows(db_url: str) -> None:
    definition, line = example("scylla")
    assert definition.get("kind") is None
    task_id = definition["id"]
    with session_scope(db_url) as session:
        queries.put_task(session, task=Task.model_validate(definition))
    assert stored_kind(db_url, task_id) == "arena"  # nothing says otherwise yet
    merge_run(db_url, task_id, line, "run-1")
    assert stored_kind(db_url, task_id) == "scylla"
    # a later run without a variant changes nothing: the evidence only grows
    merge_run(db_url, task_id, {k: v for k, v in line.items() if k != "variant"}, "run-2")
    assert stored_kind(db_url, task_id) == "scylla"


def test_a_run_whose_evidence_went_away_is_settled_by_the_refresh(db_url: str) -> None:
    from evalq.store.baseline_sql import refresh_task_baseline

    definition, line = example("scylla")
    task_id = definition["id"]
    with session_scope(db_url) as session:
        queries.put_task(session, task=Task.model_validate(definition))
    merge_run(db_url, task_id, line, "run-1")
    with session_scope(db_url) as session:  # re-merged as failed: no evaluated run is left
        session.execute(update(SubmissionRow).values(status="failed"))
    with session_scope(db_url) as session:
        refresh_task_baseline(session, task_id=task_id)
    assert stored_kind(db_url, task_id) == "arena"


def test_the_tasks_page_reads_the_stored_kind_without_reading_runs_for_it(db_url: str) -> None:
    definition, line = example("scylla")
    task_id = definition["id"]
    with session_scope(db_url) as session:
        queries.put_task(session, task=Task.model_validate(definition))
    merge_run(db_url, task_id, line, "run-1")
    statements: list[str] = []

    def seen(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        statements.append(statement.lower())

    engine = engine_for(db_url)
    event.listen(engine, "before_cursor_execute", seen)
    try:
        with session_scope(db_url) as session:
            [overview] = queries.task_overviews(session)
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    assert overview.kind == "scylla"
    assert not [s for s in statements if "exists" in s or "standings" in s], statements


def test_0020_fills_the_kind_of_the_tasks_already_stored(db_url: str) -> None:
    tasks = {
        "named": ({"kind": "suite"}, None),
        "variants": ({}, ("done", "T1")),
        "failed-variant": ({}, ("failed", "T1")),
        "references": ({"reference_outputs": ["a review"]}, ("done", "T1")),
        "scenarios": ({"required_scenarios": ["refund"]}, None),
        "plain": ({}, ("done", None)),
    }
    engine = engine_for(db_url)
    with engine.begin() as connection:
        config = migrations_config()
        config.attributes["connection"] = connection
        command.downgrade(config, "0019")
        for task_id, (definition, run) in tasks.items():
            connection.execute(
                text(
                    "INSERT INTO tasks (id, definition, content_hash, updated_at,"
                    " refresh_scheduled) VALUES (:id, :definition, 'h', CURRENT_TIMESTAMP, false)"
                ),
                {"id": task_id, "definition": json.dumps({"id": task_id, **definition})},
            )
            if run is None:
                continue
            connection.execute(
                text(
                    "INSERT INTO submissions (id, task_id, content_hash, payload, status,"
                    " enqueue_count, created_at, updated_at, tool, model, total_tokens,"
                    " tool_calls, iterations, variant) VALUES (:id, :task, 'h', '{}', :status, 1,"
                    " CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'a', 'm', 1, 0, 1, :variant)"
                ),
                {"id": f"{task_id}-run", "task": task_id, "status": run[0], "variant": run[1]},
            )
        command.upgrade(config, "head")
    found = {task_id: stored_kind(db_url, task_id) for task_id in tasks}
    assert found == {
        "named": "suite",
        "variants": "scylla",
        "failed-variant": "arena",
        "references": "peerread",
        "scenarios": "suite",
        "plain": "arena",
    }
