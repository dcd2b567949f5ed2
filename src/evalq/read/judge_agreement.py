"""Judge-human agreement of stored tasks: the judge tier's rubric scores against people's labels.

Loads each task's judge results (a panel's members each count as their own model) and labels
once, then calls the pure `evalq.judge.validation.judge_agreement`. That module is imported
only when there are judge scores to check: importing `evalq.judge` loads pydantic-ai, which the
front doors do not load for a task without a judge (tests/unit/test_import_rules.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from evalq.core.judge_validation import HumanScore, JudgeAgreement, JudgedRun, JudgeValidation
from evalq.core.profile import profile_named
from evalq.core.results import JudgeResult
from evalq.core.settings import Settings
from evalq.read.compare import resolve_tasks
from evalq.read.reply import Reply
from evalq.store import queries
from evalq.store.labels import list_labels
from evalq.store.models import SubmissionRow, TierResultRow

AnyReply = TypeVar("AnyReply", bound=Reply)


def task_judge_agreement(
    session: Session, *, tasks: str, settings: Settings, seed: int = 0
) -> JudgeAgreement:
    """Agreement of the judge with people on ``tasks`` (an id, ids with commas, or globs).

    The minimum labels and alpha are the profile's (`JudgeProfile.min_labels`, ``min_alpha``)
    of the first task named.

    Raises:
        InvalidInput: on ``tasks`` when a name or glob matches no task.
    """
    return _agreement(session, task_ids=resolve_tasks(session, tasks), settings=settings, seed=seed)


def judge_validation(
    session: Session, *, task_ids: Sequence[str], settings: Settings
) -> JudgeValidation | None:
    """The judge's agreement with people on ``task_ids`` (pooled when several), or None when
    they hold no judge score (then there is nothing to validate)."""
    judged = judged_runs(session, task_ids=list(task_ids)) if task_ids else []
    if not judged:
        return None
    report = _agreement(session, task_ids=list(task_ids), settings=settings, seed=0, judged=judged)
    pooled = [entry for entry in report.rubrics if entry.task_id is None]
    entries = pooled or report.rubrics
    if not entries:
        return None
    validated = all(entry.validated for entry in entries)
    return JudgeValidation(status="validated" if validated else "not validated", rubrics=entries)


def with_judge_validation(
    reply: AnyReply, session: Session, *, task_ids: Sequence[str], settings: Settings
) -> AnyReply:
    """``reply`` with its ``judge_validation`` set (unchanged when there is nothing to say)."""
    validation = judge_validation(session, task_ids=task_ids, settings=settings)
    if validation is None:
        return reply
    return reply.model_copy(update={"judge_validation": validation})


def _agreement(
    session: Session,
    *,
    task_ids: list[str],
    settings: Settings,
    seed: int,
    judged: list[JudgedRun] | None = None,
) -> JudgeAgreement:
    profile = profile_named(queries.get_task(session, task_id=task_ids[0]).profile, settings)
    from evalq.judge.validation import judge_agreement

    if judged is None:
        judged = judged_runs(session, task_ids=task_ids)
    humans = [
        HumanScore(label.submission_id, label.labeller, rubric, score)
        for label in list_labels(session, task_ids=task_ids)
        for rubric, score in label.scores.items()
    ]
    return judge_agreement(
        judged,
        humans,
        tasks=task_ids,
        min_labels=profile.judge.min_labels,
        min_alpha=profile.judge.min_alpha,
        seed=seed,
    )


def judged_runs(session: Session, *, task_ids: list[str]) -> list[JudgedRun]:
    """Every judge model's rubric scores of the tasks' runs (ok or failed judge tiers)."""
    rows = session.execute(
        select(SubmissionRow.id, SubmissionRow.task_id, TierResultRow.metrics)
        .join(TierResultRow, TierResultRow.submission_id == SubmissionRow.id)
        .where(
            SubmissionRow.task_id.in_(task_ids),
            TierResultRow.tier == "judge",
            TierResultRow.status.in_(("ok", "failed")),
        )
        .order_by(SubmissionRow.id)
    ).all()
    judged = []
    for submission_id, task_id, metrics in rows:
        if not metrics or "scores" not in metrics:
            continue
        result = JudgeResult.model_validate(metrics)
        members = [(m.model, m.rubrics) for m in result.panel] or [(result.model, result.rubrics)]
        for model, rubrics in members:
            scores = {r.rubric: r.score for r in rubrics if r.status == "ok"}
            judged.append(JudgedRun(submission_id, task_id, model or "(unnamed)", scores))
    return judged
