"""Task reports the API serves, computed from stored evaluations (never from the queue)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlalchemy.orm import Session

from evalq.profiles import profile_named
from evalq.scoring.arena import compute_baseline
from evalq.scoring.scylla import ScyllaRun
from evalq.scoring.variants import compare_variants
from evalq.store import queries


def baseline_report(session: Session, *, task_id: str) -> dict[str, Any]:
    """The task's current Arena baseline snapshot; version 0 is the profile's default."""
    task = queries.get_task(session, task_id=task_id)
    stored = queries.current_baseline(session, task_id=task_id)
    if stored is None:
        data = compute_baseline([], profile_named(task.profile).arena).to_dict()
        return {
            "task_id": task_id,
            "version": 0,
            "is_default": True,
            "submission_count": 0,
            "created_at": None,
            "baseline": data,
        }
    return {
        "task_id": task_id,
        "version": stored.version,
        "is_default": bool(stored.data.get("is_default")),
        "submission_count": stored.submission_count,
        "created_at": stored.created_at.isoformat(),
        "baseline": stored.data,
    }


def variant_report(session: Session, *, task_id: str) -> dict[str, Any]:
    """Per-variant statistics and uplift over the baseline variant (spec 003).

    Built from the ``scores["scylla"]`` the merge stored for each evaluated submission that
    names a variant; submissions without one are not part of it.
    """
    task = queries.get_task(session, task_id=task_id)
    runs: dict[str, list[ScyllaRun]] = defaultdict(list)
    for row, evaluation in queries.task_evaluations(session, task_id=task_id):
        stored = evaluation.scores.get("scylla")
        if isinstance(stored, dict):
            runs[str(stored.get("variant") or row.variant)].append(ScyllaRun.from_dict(stored))
    report = compare_variants(runs, profile_named(task.profile).scylla)
    return {"task_id": task_id, "runs": sum(map(len, runs.values())), **report.to_dict()}


def suite_report(session: Session, *, task_id: str) -> dict[str, Any]:
    """The suite gate of each evaluated submission of the task that carries one (spec 004)."""
    queries.get_task(session, task_id=task_id)
    entries = []
    for row, evaluation in queries.task_evaluations(session, task_id=task_id):
        suite = evaluation.scores.get("suite")
        if isinstance(suite, dict):
            entries.append(
                {
                    "submission_id": row.id,
                    "tool": row.tool,
                    "model": row.model,
                    "status": evaluation.status,
                    **suite,
                }
            )
    return {
        "task_id": task_id,
        "submissions": len(entries),
        "passed": sum(bool(e.get("passed")) for e in entries),
        "results": entries,
    }
