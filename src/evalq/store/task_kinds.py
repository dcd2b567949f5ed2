"""The kind of each task, stored (`TaskRow.kind`, migration 0020_task_kind), never derived per read.

A task that names its kind has it from its definition. One that names none derives it
(`evalq.scoring.kinds.derive_kind`) from its definition and from what its evaluated runs carry:
a suite gate makes it ``suite``, a variant ``scylla``. That evidence only grows as runs merge, so
the kind is written when the task is stored (`settle`, which reads the evidence once), moved
forward by the merge from the runs it writes (`note_runs`, a conditional UPDATE of one row, no
read of the task's other runs), and settled again by every baseline refresh (`settle`), which
also catches the rare run whose evidence went away (an evaluation re-merged as failed).
"""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from evalq.core.schemas import TASK_KINDS, Task, TaskKind
from evalq.scoring.kinds import KINDS, KindRule, kind_of
from evalq.store.models import StandingRow, SubmissionRow, TaskRow
from evalq.store.queries.evaluations import EVALUATED


def evidence(session: Session, *, task_id: str) -> tuple[bool, bool]:
    """Whether any evaluated run of the task names a variant, and whether any carries a suite
    gate (two EXISTS probes over the task's runs: for the writers, never a read)."""
    variants = (
        select(SubmissionRow.id)
        .where(
            SubmissionRow.task_id == task_id,
            SubmissionRow.status.in_(EVALUATED),
            SubmissionRow.variant.is_not(None),
        )
        .exists()
    )
    scenarios = (
        select(StandingRow.submission_id)
        .where(StandingRow.task_id == task_id, StandingRow.suite_passed.is_not(None))
        .exists()
    )
    found = session.execute(select(variants, scenarios)).one()
    return bool(found[0]), bool(found[1])


def settle(session: Session, task: Task) -> TaskKind:
    """Store the task's kind as its definition and its runs decide it; returns it."""
    has_variants, has_scenarios = evidence(session, task_id=task.id)
    kind = kind_of(task, has_variants=has_variants, has_scenarios=has_scenarios).kind
    # read first, write only on a change: on SQLite an UPDATE that matches no row still takes
    # the store's write lock for the rest of the refresh's transaction
    if session.scalar(select(TaskRow.kind).where(TaskRow.id == task.id)) != kind:
        session.execute(update(TaskRow).where(TaskRow.id == task.id).values(kind=kind))
    return kind


def note_runs(session: Session, task: Task, *, variants: bool, scenarios: bool) -> None:
    """Move the stored kind forward for runs just merged: one carrying a suite gate makes a
    task that names no kind ``suite``; one naming a variant makes it ``scylla`` where it was
    ``arena`` (a task with reference outputs stays ``peerread``: `derive_kind`'s order)."""
    if task.kind is not None:
        return
    if scenarios:
        session.execute(
            update(TaskRow)
            .where(TaskRow.id == task.id, TaskRow.kind != "suite")
            .values(kind="suite")
        )
    elif variants:
        session.execute(
            update(TaskRow)
            .where(TaskRow.id == task.id, TaskRow.kind == "arena")
            .values(kind="scylla")
        )


def kind_named(stored: str | None) -> TaskKind:
    """A stored kind column as a `TaskKind` (``arena`` for none)."""
    return stored if stored in TASK_KINDS else "arena"


def stored_kind(session: Session, *, task_id: str) -> TaskKind:
    """The task's stored kind (one primary-key read); ``arena`` for a task not stored."""
    return kind_named(session.scalar(select(TaskRow.kind).where(TaskRow.id == task_id)))


def stored_rule(session: Session, *, task_id: str) -> KindRule:
    """The rule of the task's stored kind (`stored_kind`)."""
    return KINDS[stored_kind(session, task_id=task_id)]
