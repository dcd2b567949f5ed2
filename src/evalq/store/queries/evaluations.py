"""Evaluation rows: the merge's upsert and the reads of a task's evaluations.

Every function takes the session as a keyword argument."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from evalq.core.redact import redact_data
from evalq.core.results import EvaluationScores, MissingTier
from evalq.core.status import EvaluationStatus
from evalq.store.chunks import chunks
from evalq.store.models import (
    EvaluationRow,
    SubmissionRow,
    utcnow,
)
from evalq.store.upsert import upsert

EVALUATED: tuple[EvaluationStatus, ...] = ("done", "degraded")
"""Submission statuses that rankings and baselines count (a ``failed`` one is left out)."""


def save_evaluation(
    session: Session,
    *,
    submission_id: str,
    task_id: str,
    status: str,
    scores: EvaluationScores,
    missing_tiers: dict[str, MissingTier],
    baseline_version: int,
    profile_hash: str,
) -> None:
    """Upsert the evaluation of a submission: a second merge replaces, never duplicates.

    Like `finish_tier`, the scores and missing tiers are stored with configured secrets removed.
    """
    table = EvaluationRow.__table__
    fields = {
        "task_id": task_id,
        "status": status,
        "scores": redact_data(scores.model_dump(mode="json")),
        "missing_tiers": redact_data(
            {
                name: missing.model_dump(mode="json", exclude_none=True)
                for name, missing in missing_tiers.items()
            }
        ),
        "baseline_version": baseline_version,
        "profile_hash": profile_hash,
        "evaluated_at": utcnow(),
    }
    upsert(
        session,
        table,  # type: ignore[arg-type]
        values={"submission_id": submission_id, "merge_count": 1, **fields},
        keys=["submission_id"],
        update={**fields, "merge_count": table.c.merge_count + 1},
    )


@dataclass(frozen=True)
class EvaluationValues:
    """One evaluation to store with `save_evaluations` (the arguments of `save_evaluation`)."""

    submission_id: str
    task_id: str
    status: str
    scores: EvaluationScores
    missing_tiers: dict[str, MissingTier]
    baseline_version: int
    profile_hash: str


def save_evaluations(session: Session, *, evaluations: Sequence[EvaluationValues]) -> None:
    """`save_evaluation` for many submissions: one upsert, executed with every row."""
    if not evaluations:
        return
    table = cast(Table, EvaluationRow.__table__)
    now = utcnow()
    rows = [
        {
            "submission_id": one.submission_id,
            "merge_count": 1,
            "task_id": one.task_id,
            "status": one.status,
            "scores": redact_data(one.scores.model_dump(mode="json")),
            "missing_tiers": redact_data(
                {
                    name: missing.model_dump(mode="json", exclude_none=True)
                    for name, missing in one.missing_tiers.items()
                }
            ),
            "baseline_version": one.baseline_version,
            "profile_hash": one.profile_hash,
            "evaluated_at": now,
        }
        for one in evaluations
    ]
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    statement = insert(table)  # executed with many rows: compiled once, cached
    replaced: dict[str, Any] = {c: statement.excluded[c] for c in rows[0] if c != "submission_id"}
    replaced["merge_count"] = table.c.merge_count + 1
    session.execute(
        statement.on_conflict_do_update(index_elements=["submission_id"], set_=replaced), rows
    )


def get_evaluation(session: Session, *, submission_id: str) -> EvaluationRow | None:
    """The evaluation of a submission, if merged."""
    return session.get(EvaluationRow, submission_id)


def task_evaluations(
    session: Session, *, task_id: str
) -> list[tuple[SubmissionRow, EvaluationRow]]:
    """Every evaluated submission of a task with its evaluation (``failed`` ones left out)."""
    rows = session.execute(
        select(SubmissionRow, EvaluationRow)
        .join(EvaluationRow, EvaluationRow.submission_id == SubmissionRow.id)
        .where(SubmissionRow.task_id == task_id, SubmissionRow.status.in_(EVALUATED))
        .order_by(SubmissionRow.id)
    )
    return [(row[0], row[1]) for row in rows]


def tasks_evaluations(
    session: Session, *, task_ids: Sequence[str]
) -> dict[str, list[tuple[SubmissionRow, EvaluationRow]]]:
    """`task_evaluations` of many tasks, ``{task id: its rows}`` (every id named is a key), in
    one statement per 500 tasks instead of one per task."""
    found: dict[str, list[tuple[SubmissionRow, EvaluationRow]]] = {t: [] for t in task_ids}
    for chunk in chunks(task_ids):
        rows = session.execute(
            select(SubmissionRow, EvaluationRow)
            .join(EvaluationRow, EvaluationRow.submission_id == SubmissionRow.id)
            .where(
                SubmissionRow.task_id.in_(chunk),
                SubmissionRow.status.in_(EVALUATED),
            )
            .order_by(SubmissionRow.task_id, SubmissionRow.id)
        )
        for sub_row, evaluation in rows:
            found[sub_row.task_id].append((sub_row, evaluation))
    return found


BOARD_COLUMNS = (
    SubmissionRow.id,
    SubmissionRow.task_id,
    SubmissionRow.run_hash,
    SubmissionRow.total_tokens,
    SubmissionRow.tool_calls,
    SubmissionRow.iterations,
    SubmissionRow.execution_time,
    SubmissionRow.cost_usd,
    SubmissionRow.tool,
    SubmissionRow.model,
    SubmissionRow.variant,
    SubmissionRow.review,
    EvaluationRow.status.label("evaluation_status"),
    SubmissionRow.payload["evidence"].as_string().label("evidence"),
    EvaluationRow.scores[("peerread", "composite")].as_float().label("peerread_composite"),
    EvaluationRow.scores[("peerread", "partial")].as_boolean().label("peerread_partial"),
    EvaluationRow.scores[("scylla", "composite")].as_float().label("scylla_composite"),
    EvaluationRow.scores[("suite", "passed")].as_boolean().label("suite_passed"),
    EvaluationRow.scores[("suite", "final_score")].as_float().label("suite_final_score"),
)
"""What a board ranks by, for every evaluated run of a task: the row's own columns, the
evidence as JSON text (for Arena correctness: decoded once per distinct text) and the kind
scores' few values as SQL scalars, never the trace, the output or the whole scores document
(`board_facts`); nothing in a row needs a JSON decode, nor a date parsed (30 us a row on
SQLite: `fact_rows` reads ``created_at`` of the few rows that may be copies)."""


def board_facts(session: Session, *, task_id: str, metadata: bool = False) -> list[Any]:
    """Every evaluated submission of a task as the narrow rows of `BOARD_COLUMNS` (plus its
    ``metadata`` when asked), by submission id: what ranking a board needs, read without
    decoding any payload but its evidence."""
    columns: tuple[Any, ...] = BOARD_COLUMNS
    if metadata:
        columns += (SubmissionRow.payload["metadata"].label("metadata"),)
    return list(
        session.execute(
            select(*columns)
            .join(EvaluationRow, EvaluationRow.submission_id == SubmissionRow.id)
            .where(SubmissionRow.task_id == task_id, SubmissionRow.status.in_(EVALUATED))
            .order_by(SubmissionRow.id)
        )
    )


def evaluations_of(
    session: Session, *, submission_ids: Sequence[str]
) -> dict[str, tuple[SubmissionRow, EvaluationRow]]:
    """The submissions ``submission_ids`` with their evaluations (a page of a board), by id."""
    rows = session.execute(
        select(SubmissionRow, EvaluationRow)
        .join(EvaluationRow, EvaluationRow.submission_id == SubmissionRow.id)
        .where(SubmissionRow.id.in_(list(submission_ids)))
    )
    return {sub_row.id: (sub_row, evaluation) for sub_row, evaluation in rows}
