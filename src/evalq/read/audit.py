"""`evalq task audit T` / GET and POST /v1/tasks/{id}/audit: the verifier audit, stored.

The probes and their scoring are `evalq.read.audit_probes`. An audit runs when asked, and
every time a task is stored with a changed definition (`Client.put_task`, PUT /v1/tasks/{id},
`evalq task put`); its result is one row per task (``task_audits``), read by every board, the
report and the gate, which fails on an unverified task. "Another task's best run" is the run
first on each of up to `BORROWED` other tasks' boards (as the last refresh placed them), so a
task put before any run was evaluated is audited with the three probes of its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from evalq.core.audit import TaskAudit
from evalq.core.profile import profile_named
from evalq.core.schemas import STORED, Submission, canonical_hash
from evalq.core.settings import Settings
from evalq.read.audit_probes import Probe, audit_outcome, own_probes
from evalq.read.leaderboard import LeaderboardReport
from evalq.scoring.kinds import kind_of
from evalq.store import queries
from evalq.store import standings as standings_store
from evalq.store.models import SubmissionRow, TaskAuditRow, TaskRow, utcnow
from evalq.store.upsert import upsert

BORROWED = 3
"""Other tasks whose best run is tried as a probe (the first by id that have one)."""


def borrowed_probes(session: Session, *, task_id: str) -> list[Probe]:
    """The best run of up to `BORROWED` other tasks, as probes."""
    others = list(
        session.scalars(select(TaskRow.id).where(TaskRow.id != task_id).order_by(TaskRow.id))
    )
    leaders = standings_store.leaders(session, task_ids=others)
    chosen = [leaders[t].submission_id for t in others if t in leaders][:BORROWED]
    probes = []
    for sid in chosen:
        row = session.get(SubmissionRow, sid)
        if row is None:
            continue
        run = Submission.model_validate(row.payload, context=STORED)
        probes.append(
            Probe("another task's best run", run.output, run.evidence, f"{row.task_id}/{sid}")
        )
    return probes


def audit_task(session: Session, *, task_id: str, settings: Settings | None = None) -> TaskAudit:
    """Probe ``task_id``'s checks now and store the result.

    Raises:
        NotFound: no such task.
    """
    task = queries.get_task(session, task_id=task_id)
    profile = profile_named(task.profile, settings)
    kind = kind_of(task, has_variants=False, has_scenarios=False).kind
    probes = own_probes(task) + borrowed_probes(session, task_id=task_id)
    status, outcomes, reason = audit_outcome(task, kind, profile.text, probes)
    found = TaskAudit(
        task_id=task_id,
        status=status,
        passed=[o.probe + (f" ({o.source})" if o.source else "") for o in outcomes if o.passed],
        probes=outcomes,
        reason=reason,
        audited_at=utcnow(),
    )
    stored = found.model_dump(mode="json")
    digest = canonical_hash(task.model_dump(mode="json"))
    values = {"status": status, "audit": stored, "task_hash": digest, "audited_at": utcnow()}
    upsert(
        session,
        TaskAuditRow.__table__,  # type: ignore[arg-type]
        values={"task_id": task_id, **values},
        keys=["task_id"],
        update=values,
    )
    return found


def audit_if_changed(
    session: Session, *, task_id: str, changed: bool, settings: Settings | None = None
) -> TaskAudit | None:
    """Audit a task just stored when its definition changed, or when it was never audited."""
    if not changed and session.get(TaskAuditRow, task_id) is not None:
        return None
    return audit_task(session, task_id=task_id, settings=settings)


def stored_audit(session: Session, *, task_id: str) -> TaskAudit | None:
    """The task's last audit, or None when it was never audited."""
    row = session.get(TaskAuditRow, task_id)
    return None if row is None else TaskAudit.model_validate(row.audit)


def with_verifier(board: LeaderboardReport, session: Session) -> LeaderboardReport:
    """``board`` with its task's "unverified" mark, when its last audit found one."""
    mark = unverified_marks(session, task_ids=[board.task_id]).get(board.task_id)
    return board if mark is None else board.model_copy(update={"verifier": mark})


def unverified_marks(session: Session, *, task_ids: Sequence[str]) -> dict[str, str]:
    """``{task id: "unverified: ..."}`` for those of ``task_ids`` whose last audit is unverified."""
    marks: dict[str, str] = {}
    for start in range(0, len(task_ids), 500):  # SQLite's bound on parameters
        rows = session.scalars(
            select(TaskAuditRow).where(
                TaskAuditRow.task_id.in_(task_ids[start : start + 500]),
                TaskAuditRow.status == "unverified",
            )
        )
        for row in rows:
            mark = TaskAudit.model_validate(row.audit).mark()
            if mark is not None:
                marks[row.task_id] = mark
    return marks
