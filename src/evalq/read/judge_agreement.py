"""Judge-human agreement of stored tasks: the judge tier's rubric scores against people's labels.

Loads each task's judge results (a panel's members each count as their own model) and labels
once, then calls the pure `evalq.judge.validation.judge_agreement`. That module is imported
only when there are judge scores to check: importing `evalq.judge` loads pydantic-ai, which the
front doors do not load for a task without a judge (tests/unit/test_import_rules.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from evalq.core.judge_validation import (
    HumanScore,
    JudgeAgreement,
    JudgedRun,
    JudgeValidation,
)
from evalq.core.labels import Label, LabelCandidate, LabelQueue
from evalq.core.profile import profile_named
from evalq.core.results import CascadeRecord, JudgeResult
from evalq.core.settings import Settings
from evalq.read.reply import Reply
from evalq.store import queries, tallies
from evalq.store.chunks import chunks
from evalq.store.labels import list_labels
from evalq.store.models import SubmissionRow, TierResultRow

AnyReply = TypeVar("AnyReply", bound=Reply)
Reference = Literal["human", "top judge"]


def task_judge_agreement(
    session: Session, *, tasks: str, settings: Settings, seed: int = 0
) -> JudgeAgreement:
    """Agreement of the judge with people on ``tasks`` (an id, ids with commas, or globs).

    The minimum labels and alpha are the profile's (`JudgeProfile.min_labels`, ``min_alpha``)
    of the first task named.

    Raises:
        InvalidInput: on ``tasks`` when a name or glob matches no task.
    """
    from evalq.read.compare import resolve_tasks  # with scipy: a board needs neither

    return _agreement(session, task_ids=resolve_tasks(session, tasks), settings=settings, seed=seed)


def judge_validation(
    session: Session, *, task_ids: Sequence[str], settings: Settings
) -> JudgeValidation | None:
    """The judge's agreement with people on ``task_ids`` (pooled when several). Without a judge
    score, people's agreement among themselves when they labelled runs (status ``no judge
    scores``), else None (nothing to validate, nothing labelled).

    Which (rubric, model) pairs a task has are its judged-run tallies (`evalq.store.tallies`,
    kept at merge); only the labelled runs' judge scores are read, the only ones an agreement
    pairs with people's: a board's validation never reads the task's every judged run."""
    pairs = tallies.judged_pairs(session, task_ids=list(task_ids)) if task_ids else {}
    if not pairs:
        return people_validation(session, task_ids=task_ids)
    labels = list_labels(session, task_ids=list(task_ids))
    judged = judged_runs(
        session,
        task_ids=list(task_ids),
        submission_ids=sorted({label.submission_id for label in labels}),
    )
    report = _agreement(
        session,
        task_ids=list(task_ids),
        settings=settings,
        seed=0,
        judged=judged,
        labels=labels,
        pairs=pairs,
    )
    pooled = [entry for entry in report.rubrics if entry.task_id is None]
    entries = pooled or report.rubrics
    if not entries:
        return None
    validated = all(entry.validated for entry in entries)
    return JudgeValidation(status="validated" if validated else "not validated", rubrics=entries)


def people_validation(session: Session, *, task_ids: Sequence[str]) -> JudgeValidation | None:
    """People's own agreement per rubric on the tasks' labelled runs, as the judge validation
    of tasks no judge scored yet (status ``no judge scores``); None when nobody scored a rubric
    of them. The pure `evalq.judge.validation.people_agreement` (the ceiling `evalq judge
    agreement` reports) is imported only here, when there are labels to compare."""
    humans = [
        HumanScore(label.submission_id, label.labeller, rubric, score)
        for label in (list_labels(session, task_ids=list(task_ids)) if task_ids else [])
        for rubric, score in label.scores.items()
    ]
    if not humans:
        return None
    from evalq.judge.validation import people_agreement

    return JudgeValidation(status="no judge scores", rubrics=[], people=people_agreement(humans))


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
    labels: list[Label] | None = None,
    pairs: Mapping[str, set[tuple[str, str]]] | None = None,
) -> JudgeAgreement:
    profile = profile_named(queries.get_task(session, task_id=task_ids[0]).profile, settings)
    from evalq.judge.validation import judge_agreement

    if judged is None:
        judged = judged_runs(session, task_ids=task_ids)
    if labels is None:
        labels = list_labels(session, task_ids=task_ids)
    humans = [
        HumanScore(label.submission_id, label.labeller, rubric, score)
        for label in labels
        for rubric, score in label.scores.items()
    ]
    return judge_agreement(
        judged,
        humans,
        tasks=task_ids,
        min_labels=profile.judge.min_labels,
        min_alpha=profile.judge.min_alpha,
        seed=seed,
        pairs=pairs,
    )


def judged_runs(
    session: Session, *, task_ids: list[str], submission_ids: Sequence[str] | None = None
) -> list[JudgedRun]:
    """Every judge model's rubric scores of the tasks' runs (ok or failed judge tiers); of
    ``submission_ids`` only, when given."""
    found: list[Any] = []
    pieces: list[list[str]] | list[None] = (
        [None] if submission_ids is None else list(chunks(submission_ids))
    )
    for chunk in pieces:
        query = (
            select(SubmissionRow.id, SubmissionRow.task_id, TierResultRow.metrics)
            .join(TierResultRow, TierResultRow.submission_id == SubmissionRow.id)
            .where(
                SubmissionRow.task_id.in_(task_ids),
                TierResultRow.tier == "judge",
                TierResultRow.status.in_(("ok", "failed")),
            )
            .order_by(SubmissionRow.id)
        )
        if chunk is not None:
            query = query.where(SubmissionRow.id.in_(chunk))
        found += session.execute(query).all()
    judged = []
    for submission_id, task_id, metrics in found:
        if not metrics or "scores" not in metrics:
            continue
        result = JudgeResult.model_validate(metrics)
        members = [(m.model, m.rubrics) for m in result.panel] or [(result.model, result.rubrics)]
        for model, rubrics in members:
            scores = {r.rubric: r.score for r in rubrics if r.status == "ok"}
            judged.append(JudgedRun(submission_id, task_id, model or "(unnamed)", scores))
    return judged


def calibration_items(
    session: Session, *, tasks: str, reference: Reference
) -> list[list[tuple[float, bool]]]:
    """Labelled (confidence, agreed) pairs per cascade level, from the audited runs.

    Only the audit share: it is drawn by a hash of the run's id, so it is distributed like live
    traffic, as the guarantee assumes. The runs that reached the top because every lower level
    doubted them are the hard ones; counting them would calibrate on harder items than the
    cascade meets (thresholds too strict) and, worse, on a mixture the bound says nothing
    about. With ``reference`` ``human``,
    one item per (run, labeller) with rubric scores: a level agreed when its most common step
    equals the person's score on every rubric both scored. With ``top judge``, one item per run:
    a level agreed when its steps equal the top level's. A level with no confidence (it scored
    nothing) counts as confidence 0, disagreeing.

    Raises:
        InvalidInput: on ``tasks`` when a name or glob matches no task.
    """
    from evalq.read.compare import resolve_tasks

    task_ids = resolve_tasks(session, tasks)
    records = cascade_records(session, task_ids=task_ids)
    labels = list_labels(session, task_ids=task_ids) if reference == "human" else []
    by_run: dict[str, list[dict[str, int]]] = {}
    for label in labels:
        if label.scores:
            by_run.setdefault(label.submission_id, []).append(
                {str(rubric): score for rubric, score in label.scores.items()}
            )
    items = []
    for submission_id, record in records:
        top = record.asked[-1].steps
        references = by_run.get(submission_id, []) if reference == "human" else [top]
        for wanted in references:
            item = []
            for outcome in record.asked:
                shared = [r for r in wanted if outcome.steps.get(r) is not None]
                agreed = bool(shared) and all(outcome.steps[r] == wanted[r] for r in shared)
                item.append((outcome.confidence or 0.0, agreed))
            items.append(item)
    return items


def cascade_records(session: Session, *, task_ids: list[str]) -> list[tuple[str, CascadeRecord]]:
    """The cascade records of the tasks' audited runs (every level asked)."""
    rows = session.execute(
        select(SubmissionRow.id, TierResultRow.metrics)
        .join(TierResultRow, TierResultRow.submission_id == SubmissionRow.id)
        .where(
            SubmissionRow.task_id.in_(task_ids),
            TierResultRow.tier == "judge",
            TierResultRow.status.in_(("ok", "failed")),
        )
        .order_by(SubmissionRow.id)
    ).all()
    found = []
    for submission_id, metrics in rows:
        record = (metrics or {}).get("cascade")
        if record is None:
            continue
        parsed = CascadeRecord.model_validate(record)
        if parsed.audited and len(parsed.asked) == parsed.levels:
            found.append((submission_id, parsed))
    return found


def label_queue(session: Session, *, task_ids: list[str], unlabelled_only: bool) -> LabelQueue:
    """The tasks' runs the cascade left 'judge uncertain' or drew for the audit share.

    Args:
        unlabelled_only: leave out the runs somebody labelled already.
    """
    rows = session.execute(
        select(SubmissionRow.id, SubmissionRow.task_id, TierResultRow.metrics)
        .join(TierResultRow, TierResultRow.submission_id == SubmissionRow.id)
        .where(SubmissionRow.task_id.in_(task_ids), TierResultRow.tier == "judge")
        .order_by(SubmissionRow.id)
    ).all()
    labelled: dict[str, list[str]] = {}
    for label in sorted(list_labels(session, task_ids=task_ids), key=lambda x: x.created_at):
        labelled.setdefault(label.submission_id, []).append(label.labeller)
    candidates = []
    for submission_id, task_id, metrics in rows:
        record = (metrics or {}).get("cascade")
        if record is None:
            continue
        parsed = CascadeRecord.model_validate(record)
        reason = "judge uncertain" if parsed.level is None else "audit" if parsed.audited else None
        by = labelled.get(submission_id, [])
        if reason is None or (unlabelled_only and by):
            continue
        candidates.append(
            LabelCandidate(
                submission_id=submission_id, task_id=task_id, reason=reason, labellers=by
            )
        )
    candidates.sort(key=lambda c: (c.reason != "judge uncertain", c.submission_id))
    return LabelQueue(candidates=candidates)
