"""Judged results: every judge's scores of a run, appended and never updated (migration 0025).

The one writer of ``judged_results`` and of ``task_judge_series`` (the judges that scored each
task's runs, written with the result that first shows one). The judge tier appends the result
that scores a run (`evalq.store.queries.tiers.finish_tier`); a re-judge appends a result beside
it (`evalq.service.rejudge`). A run judged again by the same judge keeps its first result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import literal, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from evalq.core.judge_series import JudgedSource, series_id
from evalq.core.results import JudgeIdentity, JudgeResult
from evalq.store.models import JudgedResultRow, SubmissionRow, TaskJudgeSeriesRow, utcnow
from evalq.store.webhooks import as_utc


def append_judged(
    session: Session, *, submission_id: str, result: JudgeResult, source: JudgedSource
) -> bool:
    """Append ``result`` as the run's score by its judge; False when it has no identity (a
    judge from before identities) or no rubric score, or that judge already judged the run."""
    if result.identity is None or not any(v is not None for v in result.scores.values()):
        return False
    values = {
        "submission_id": submission_id,
        "series": series_id(result.identity),
        "identity": result.identity.model_dump(mode="json"),
        "scores": dict(result.scores),
        "source": source,
        "judged_at": utcnow(),
    }
    keys = ["submission_id", "series"]
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    added = session.execute(
        dialect.insert(JudgedResultRow).values(**values).on_conflict_do_nothing(index_elements=keys)
    )
    if not added.rowcount:  # type: ignore[attr-defined]
        return False
    if source == "tier":  # the run's task is scored by this judge (a key lookup, not a scan)
        task = select(SubmissionRow.task_id, literal(values["series"])).where(
            SubmissionRow.id == submission_id
        )
        session.execute(
            dialect.insert(TaskJudgeSeriesRow)
            .from_select(["task_id", "series"], task)
            .on_conflict_do_nothing(index_elements=["task_id", "series"])
        )
    return True


@dataclass(frozen=True)
class Judged:
    """One stored judged result, as the read side uses it (never leaves the process)."""

    submission_id: str
    task_id: str
    held: bool
    series: str
    identity: JudgeIdentity
    scores: dict[str, float | None]
    source: JudgedSource
    judged_at: datetime


def scoring_series(session: Session, *, task_ids: Sequence[str]) -> dict[str, set[str]]:
    """Each task's judges that scored some of its runs (judge-tier results), from
    ``task_judge_series``: a key range per task, whatever the number of its judged runs."""
    found: dict[str, set[str]] = {}
    for start in range(0, len(task_ids), 500):  # SQLite's bound on parameters
        rows = session.execute(
            select(TaskJudgeSeriesRow.task_id, TaskJudgeSeriesRow.series).where(
                TaskJudgeSeriesRow.task_id.in_(task_ids[start : start + 500])
            )
        ).all()
        for task_id, series in rows:
            found.setdefault(task_id, set()).add(series)
    return found


def judged_of_tasks(session: Session, *, task_ids: Sequence[str]) -> list[Judged]:
    """Every judged result of the tasks' runs, oldest first (one statement per 500 tasks)."""
    found: list[Judged] = []
    for start in range(0, len(task_ids), 500):  # SQLite's bound on parameters
        rows = session.execute(
            select(JudgedResultRow, SubmissionRow.task_id, SubmissionRow.review)
            .join(SubmissionRow, SubmissionRow.id == JudgedResultRow.submission_id)
            .where(SubmissionRow.task_id.in_(task_ids[start : start + 500]))
            .order_by(JudgedResultRow.judged_at, JudgedResultRow.id)
        ).all()
        found += [
            Judged(
                submission_id=row.submission_id,
                task_id=task_id,
                held=review == "flagged",
                series=row.series,
                identity=JudgeIdentity.model_validate(row.identity),
                scores=row.scores,
                source=row.source,  # type: ignore[arg-type]
                judged_at=as_utc(row.judged_at).astimezone(UTC),
            )
            for row, task_id, review in rows
        ]
    found.sort(key=lambda j: j.judged_at)
    return found
