"""One submission as clients see it: status, tier outcomes, and its scores today.

The Arena scores depend on the task's baseline, which moves as submissions arrive. What a client
reads is the score against the task's *current* baseline (re-scored from the stored raw figures,
as the leaderboard does), with that baseline's version, so a submission shows one Arena number
wherever it is looked at; the score as merged stays in the stored history under ``merged``.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from evalq.core.profile import profile_named
from evalq.core.redact import redact_data
from evalq.core.results import ArenaScores, ErrorRecord
from evalq.core.schemas import STORED, Submission
from evalq.core.settings import Settings
from evalq.read.baseline import current_baseline
from evalq.scoring.arena import score_run
from evalq.scoring.arena.run import ArenaRun
from evalq.store import queries


def submission_result(
    session: Session, *, submission_id: str, settings: Settings | None = None
) -> dict[str, Any]:
    """Status, scores (Arena against the current baseline), tier outcomes with their errors
    (tracebacks left out), the review state, and the evaluation as merged.

    Configured secrets are removed again on the way out (`redact_data`): rows stored before
    redaction existed may still hold one.

    Raises:
        NotFound: no such submission.
    """
    row = queries.get_submission_row(session, submission_id=submission_id)
    evaluation = queries.get_evaluation(session, submission_id=submission_id)
    tiers = queries.tier_results(session, submission_id=submission_id)
    result: dict[str, Any] = {
        "id": row.id,
        "task_id": row.task_id,
        "status": row.status,
        "error": row.error,
        "review": row.review,
        "metadata": row.payload.get("metadata") or {},
        "tiers": {
            name: {"status": t.status, "metrics": t.metrics, "error": _public(t.error)}
            for name, t in sorted(tiers.items())
        },
    }
    if evaluation is None:
        return dict(redact_data(result, settings))
    task = queries.get_task(session, task_id=row.task_id)
    profile = profile_named(task.profile, settings)
    current = current_baseline(session, task_id=task.id, profile=profile)
    submission = Submission.model_validate(row.payload, context=STORED)
    arena = score_run(
        ArenaRun.of(submission, row.cost_usd),
        task,
        submission.evidence,
        current.baseline,
        profile.arena,
    )
    scores = dict(evaluation.scores)
    scores["arena"] = ArenaScores.model_validate(arena.to_dict()).model_dump(mode="json")
    result |= {
        "scores": scores,
        "missing_tiers": evaluation.missing_tiers,
        "baseline_version": current.version,
        "profile_hash": evaluation.profile_hash,
        "evaluated_at": evaluation.evaluated_at.isoformat(),
        "merged": {
            "arena": evaluation.scores.get("arena"),
            "baseline_version": evaluation.baseline_version,
        },
    }
    return dict(redact_data(result, settings))


def _public(error: dict[str, Any] | None) -> dict[str, Any] | None:
    """A stored tier error without its traceback (kept in the store for operators)."""
    if error is None:
        return None
    return ErrorRecord.model_validate(error).public().model_dump(mode="json", exclude_none=True)
