"""Task reports the API serves, computed from stored evaluations (never from the queue)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from evalq.core.profile import profile_named
from evalq.core.results import EvaluationScores
from evalq.core.settings import Settings
from evalq.read.baseline import current_baseline
from evalq.read.variants import variant_runs
from evalq.scoring.worth import analyse_variants
from evalq.store import queries


def baseline_report(
    session: Session, *, task_id: str, settings: Settings | None = None
) -> dict[str, Any]:
    """The task's current Arena baseline snapshot; version 0 is the profile's default."""
    task = queries.get_task(session, task_id=task_id)
    current = current_baseline(
        session, task_id=task_id, profile=profile_named(task.profile, settings)
    )
    return {
        "task_id": task_id,
        "version": current.version,
        "is_default": current.baseline.is_default,
        "submission_count": current.submission_count,
        "created_at": None if current.created_at is None else current.created_at.isoformat(),
        "baseline": current.baseline.to_dict(),
    }


def variant_report(
    session: Session, *, task_id: str, settings: Settings | None = None, include_held: bool = False
) -> dict[str, Any]:
    """Per-variant statistics, uplift over the baseline variant, and whether each step is worth
    it (spec 003, `evalq.scoring.worth`).

    Built from the Scylla scores the merge stored for each evaluated submission that names a
    variant (`variant_runs`); submissions without one are not part of it, nor are runs held
    for review unless ``include_held``.
    """
    task = queries.get_task(session, task_id=task_id)
    runs = variant_runs(session, task_id=task_id, include_held=include_held)
    profile = profile_named(task.profile, settings)
    report = analyse_variants(runs, profile.scylla, level=profile.arena.confidence_level)
    return {"task_id": task_id, "runs": sum(map(len, runs.values())), **report.to_dict()}


def suite_report(session: Session, *, task_id: str) -> dict[str, Any]:
    """The suite gate of each evaluated submission of the task that carries one (spec 004)."""
    queries.get_task(session, task_id=task_id)
    entries = []
    passed = 0
    for row, evaluation in queries.task_evaluations(session, task_id=task_id):
        suite = EvaluationScores.model_validate(evaluation.scores).suite
        if suite is not None:
            passed += suite.passed
            entries.append(
                {
                    "submission_id": row.id,
                    "tool": row.tool,
                    "model": row.model,
                    "status": evaluation.status,
                    **suite.model_dump(mode="json"),
                }
            )
    return {
        "task_id": task_id,
        "submissions": len(entries),
        "passed": passed,
        "results": entries,
    }
