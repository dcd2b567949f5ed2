"""Stored submissions as Arena runs: what tests and benchmarks compare the SQL baseline against."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from evalq.scoring.arena.run import ArenaRun
from evalq.store.models import SubmissionRow


def arena_run(row: SubmissionRow) -> ArenaRun:
    """The Arena figures of a stored submission, from its columns (no payload parsing)."""
    return ArenaRun(
        submission_id=row.id,
        task_id=row.task_id,
        total_tokens=row.total_tokens,
        tool_calls=row.tool_calls,
        iterations=row.iterations,
        execution_time=row.execution_time,
        cost_usd=row.cost_usd,
        tool=row.tool,
        model=row.model,
        usage_collected=row.trace_provenance == "collected",
    )


def task_submission_rows(session: Session, *, task_id: str) -> list[SubmissionRow]:
    """Every submission of a task (for baseline refresh and leaderboards)."""
    return list(
        session.scalars(
            select(SubmissionRow).where(SubmissionRow.task_id == task_id).order_by(SubmissionRow.id)
        )
    )


def submission_columns(
    sid: str,
    *,
    task_id: str = "t1",
    tokens: int = 100,
    calls: int = 1,
    seconds: float | None = None,
    tool: str = "aider",
    model: str = "gpt-4o",
    **extra: Any,
) -> dict[str, Any]:
    """The columns of one evaluated (``done``) submission row, to insert without the pipeline."""
    return {
        "id": sid,
        "task_id": task_id,
        "content_hash": "0" * 64,
        "payload": {},
        "status": "done",
        "tool": tool,
        "model": model,
        "total_tokens": tokens,
        "tool_calls": calls,
        "iterations": 3,
        "execution_time": seconds,
        "cost_usd": 0.01,
        **extra,
    }
