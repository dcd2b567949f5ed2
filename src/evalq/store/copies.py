"""The copies a board reads (``StandingRow.copy_of``), decided where a run's copies can change.

Which runs of a task are copies is `evalq.scoring.review.duplicates`' answer over its evaluated
runs, with the marks the refresh stored (``SubmissionRow.copy_of``: near-copies by similarity
too, which need the payloads) where it finds none: `evalq.read.leaderboard.copies_of` computes
it over the task. That answer splits by group: a run is compared only with the runs that share
its content (``run_hash``) or its agent's shape (``shape_hash``, tool, model), so a merge
changes the copies of its runs' groups alone. The writer (`evalq.read.boards.projector`):

- at merge, `regroup` reads the groups of the merged runs (the runs sharing a content or a
  shape with them, and theirs in turn: an index range per key, one statement for a run no
  other repeats), decides them again, and returns the marks that change; `mark` writes them;
- at the refresh, `store_all` stores the task's answer, computed whole (the marks that change).

A board reads the marks (`stored`): an index range over the task's copies, whatever its size.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import and_, bindparam, select, union_all
from sqlalchemy.orm import Session, aliased

from evalq.scoring.review import duplicates
from evalq.store.models import StandingRow, SubmissionRow
from evalq.store.queries import EVALUATED, FACT_COLUMNS, run_facts

S, R = SubmissionRow, StandingRow
Shape = tuple[str, str, str]
_TABLE: Any = StandingRow.__table__


def regroup(session: Session, runs: Sequence[SubmissionRow]) -> dict[str, str | None]:
    """The board's copy marks that change with ``runs`` merged: every evaluated run of their
    tasks that shares a content or an agent's shape with them (and so on) decided again, as
    `evalq.read.leaderboard.copies_of` decides the whole task. Runs without a standing get no
    mark (they are on no board)."""
    changed: dict[str, str | None] = {}
    for task_id in sorted({run.task_id for run in runs}):
        mine = [run for run in runs if run.task_id == task_id]
        members = _group(session, task_id, mine)
        found = duplicates([run_facts(row) for row in members.values()])
        for sid, row in members.items():
            wanted = found.get(sid, row.copy_of)
            if row.standing is not None and row.board_copy_of != wanted:
                changed[sid] = wanted
    return changed


def _group(session: Session, task_id: str, runs: Sequence[SubmissionRow]) -> dict[str, Any]:
    """The evaluated runs of the task that are ``runs`` or share a content or an agent's shape
    with them, closed under both: one statement per round (one when nothing repeats them)."""
    hashes, shapes = _keys(runs)
    seen_hashes: set[str] = set()
    seen_shapes: set[Shape] = set()
    ids = {run.id for run in runs}
    members: dict[str, Any] = {}
    while ids or hashes or shapes:
        seen_hashes |= hashes
        seen_shapes |= shapes
        rows = session.execute(_around(task_id, ids, hashes, shapes))
        wanted = ids
        ids = set()
        found_hashes, found_shapes = set(), set()
        for row in rows:
            # the shape's index range holds other agents' runs of that shape too
            mine = row.id in wanted or row.run_hash in hashes or _shape(row) in shapes
            if row.id in members or not mine:
                continue
            members[row.id] = row
            more_hashes, more_shapes = _keys([row])
            found_hashes |= more_hashes - seen_hashes
            found_shapes |= more_shapes - seen_shapes
        hashes, shapes = found_hashes, found_shapes
    return members


def _around(task_id: str, ids: set[str], hashes: set[str], shapes: set[Shape]) -> Any:
    """The evaluated runs of the task among ``ids``, of a content of ``hashes`` or of a shape
    of ``shapes`` (any agent): each part an index range (ids, task and content, task and
    shape), put end to end."""
    columns = (
        *FACT_COLUMNS,
        S.copy_of,
        R.submission_id.label("standing"),
        R.copy_of.label("board_copy_of"),
    )
    evaluated = [S.task_id == task_id, S.status.in_(EVALUATED)]
    conditions = [S.id.in_(sorted(ids))] if ids else []
    conditions += [S.run_hash.in_(sorted(hashes))] if hashes else []
    conditions += [S.shape_hash.in_(sorted({shape for shape, _, _ in shapes}))] if shapes else []
    parts = [
        select(*columns).outerjoin(R, R.submission_id == S.id).where(*evaluated, condition)
        for condition in conditions
    ]
    return parts[0] if len(parts) == 1 else union_all(*parts)


def _shape(row: Any) -> Shape | None:
    if row.run_hash is None or row.shape_hash is None:
        return None
    return (row.shape_hash, row.tool, row.model)


def _keys(runs: Sequence[Any]) -> tuple[set[str], set[Shape]]:
    """The contents and agents' shapes ``runs`` may repeat (a run without a content hash is
    never compared: `duplicates`)."""
    hashes = {run.run_hash for run in runs if run.run_hash is not None}
    shapes = {shape for run in runs if (shape := _shape(run)) is not None}
    return hashes, shapes


def mark(session: Session, marks: Mapping[str, str | None]) -> None:
    """Write the board's copy marks (one statement, whatever their number)."""
    if marks:
        session.execute(
            _TABLE.update().where(_TABLE.c.submission_id == bindparam("sid")),
            [{"sid": sid, "copy_of": original} for sid, original in sorted(marks.items())],
        )


def store_all(
    session: Session, *, task_id: str, copies: Mapping[str, str]
) -> dict[str, str | None]:
    """The marks that make the task's board read ``copies`` (its whole answer, as the refresh
    computes it): those that change, for `mark`. One index range over the stored copies."""
    marked = dict(
        session.execute(
            select(R.submission_id, R.copy_of).where(R.task_id == task_id, R.copy_of.is_not(None))
        ).all()
    )
    changed: dict[str, str | None] = {sid: None for sid in marked if sid not in copies}
    changed |= {sid: original for sid, original in copies.items() if marked.get(sid) != original}
    return changed


def stored(session: Session, *, task_id: str) -> tuple[dict[str, str], dict[str, str]]:
    """The task's copies as its board reads them (copy -> original), and the near-copies among
    them (a content other than its original's: `evalq.scoring.review.near_copies`): one
    statement over the task's copies alone."""
    original = aliased(S)
    rows = session.execute(
        select(R.submission_id, R.copy_of, S.run_hash, original.run_hash)
        .join(S, S.id == R.submission_id)
        .outerjoin(original, and_(original.id == R.copy_of, original.status.in_(EVALUATED)))
        .where(R.task_id == task_id, R.copy_of.is_not(None))
    )
    copies: dict[str, str] = {}
    near: dict[str, str] = {}
    for sid, copy_of, run_hash, original_hash in rows:
        copies[sid] = str(copy_of)
        if run_hash is not None and run_hash != original_hash:
            near[sid] = str(copy_of)
    return copies, near
