"""A store of evaluated submissions written directly in bulk, for comparisons at scale.

Each submission is scored by the merge's own pure function (`evaluate_submission`, every tier
skipped), then the rows are inserted with one multi-row INSERT per table and chunk: the fastest
realistic way to a store of 25,000 evaluated submissions (no broker, no worker).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from sqlalchemy import insert
from sqlalchemy.orm import Session

from evalq.core.profile import profile_named
from evalq.core.results import TierOutcome
from evalq.core.schemas import TIERS, Submission, Task
from evalq.scoring.arena.baseline import compute_baseline
from evalq.scoring.evaluation import evaluate_submission
from evalq.store import queries
from evalq.store.models import EvaluationRow, SubmissionRow

SKIPPED = {tier: TierOutcome(tier=tier, status="skipped", reason="bulk store") for tier in TIERS}
CHUNK = 1000


def bulk_submission(
    sid: str, task_id: str, *, model: str, tool: str = "aider", seed: int = 0, **extra: Any
) -> Submission:
    """A small valid submission whose usage figures vary with ``seed``."""
    draw = random.Random(seed)
    return Submission.model_validate(
        {
            "id": sid,
            "task_id": task_id,
            "tool": tool,
            "model": model,
            "usage": {
                "input_tokens": draw.randint(500, 5000),
                "output_tokens": draw.randint(100, 1000),
                "tool_calls": draw.randint(1, 20),
                "execution_time": round(draw.uniform(5, 120), 2),
            },
            "output": "Fixed the parser and added a regression test.",
        }
        | extra
    )


def put_tasks(session: Session, tasks: Sequence[Task]) -> None:
    """Define ``tasks``."""
    for task in tasks:
        queries.put_task(session, task=task)


def add_evaluated(
    session: Session, tasks: dict[str, Task], submissions: Sequence[Submission]
) -> None:
    """Store ``submissions`` as ``done``, each with the evaluation the merge would store."""
    profile = profile_named("default")
    baseline = compute_baseline([], profile.arena)
    for start in range(0, len(submissions), CHUNK):
        rows, evaluations = [], []
        for submission in submissions[start : start + CHUNK]:
            task = tasks[submission.task_id]
            result = evaluate_submission(
                submission, task, SKIPPED, baseline, profile, cost_usd=None
            )
            usage = submission.usage
            rows.append(
                {
                    "id": submission.id,
                    "task_id": submission.task_id,
                    "content_hash": submission.content_hash(),
                    "payload": submission.model_dump(mode="json"),
                    "status": "done",
                    "tool": submission.tool,
                    "model": submission.model,
                    "variant": submission.variant,
                    "run_index": submission.run_index,
                    "planned_runs": submission.planned_runs,
                    "total_tokens": usage.tokens,
                    "tool_calls": usage.tool_calls,
                    "iterations": usage.iterations,
                    "execution_time": usage.execution_time,
                    "cost_usd": None,
                }
            )
            evaluations.append(
                {
                    "submission_id": submission.id,
                    "task_id": submission.task_id,
                    "status": result.status,
                    "scores": result.scores.model_dump(mode="json"),
                    "missing_tiers": {
                        name: m.model_dump(mode="json", exclude_none=True)
                        for name, m in result.missing.items()
                    },
                    "baseline_version": 0,
                    "profile_hash": "bulk",
                }
            )
        session.execute(insert(SubmissionRow), rows)
        session.execute(insert(EvaluationRow), evaluations)
