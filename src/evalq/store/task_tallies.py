"""The counts of a task's board (`TaskTallyRow`): what a live board's summary, histogram and
filter choices say, kept in proportion to the change and read without aggregating the task.

A run with a standing adds to its task's counts (`Standing.counts`), unless the board reads
it as a copy (``StandingRow.copy_of``), which adds only its filter values:

- ``rows``, ``held``, ``collected``, ``held collected``, ``own trace``: the board's rows, those
  held for review, those whose usage comes from a collected trace, both, and those with a
  trace of their own (the summary's counts, and what a board that ranks only collected usage
  lists apart);
- per kind and scope (``any``: the rows not held; ``collected``: those of them whose trace was
  collected, for a profile that ranks only them), the kind's ranking value's ``values``,
  ``sum`` and ``squares`` in whole ten-thousandths (exact integers: the mean and squared
  deviations are the exact ones, as `evalq.store.standings.summary` computes them) and its
  ``bin 0`` ... ``bin 9`` over the kind's scale; PeerRead's ``recommendation`` labels and
  ``unjudged`` composites;
- ``choice tool|model|variant VALUE``: the filter values, copies included.

Every kind's value is counted (a merge can move the task's kind; the counts are ready for
whichever it is). The writer is `evalq.read.boards.projector` alone: the merge snapshots the
runs it changes before and after (`snapshot`) and adds the difference (`add`, one upsert);
the refresh, whose baseline move rescores every run, counts the task again set-wise
(`recount`: one aggregate statement, one for the labels, one per filter field).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import BigInteger, ColumnElement, and_, case, cast, delete, func, or_, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from evalq.scoring.kinds import KINDS
from evalq.store.chunks import chunks
from evalq.store.models import StandingRow, SubmissionRow, TaskTallyRow

S, R, T = SubmissionRow, StandingRow, TaskTallyRow
SCALE = 10_000
"""A ranking value is stored rounded to 4 decimals: whole ten-thousandths."""
BINS = 10
"""Bins of a board's histogram of its ranking values."""
VALUES = {
    "arena": R.arena_key,
    "peerread": R.peerread_key,
    "scylla": R.scylla_key,
    "suite": R.suite_key,
}
"""Each kind's ranking value's column (`evalq.store.standings.value_of`)."""
SCOPES = ("any", "collected")
COUNTS = ("rows", "held", "collected", "held collected", "own trace")
CHOICES = ("tool", "model", "variant")


def value_key(kind: str, scope: str, what: str) -> str:
    """The key of one figure of a kind's value (``values``, ``sum``, ``squares``, ``bin I``)."""
    return f"{kind} {scope} {what}"


def scope_of(traced_only: bool) -> str:
    """The rows a board ranks: not held, and collected when it ranks only collected usage."""
    return "collected" if traced_only else "any"


def edges(kind: str, n: int = BINS) -> list[float]:
    """The lower edges of the ``n`` equal bins of the kind's scale (`evalq.store.standings.bins`
    compares each value with these same numbers)."""
    lo, hi = KINDS[kind].scale  # type: ignore[index]
    step = (hi - lo) / n
    return [lo + i * step for i in range(n)]


def bin_of(kind: str, value: float) -> int | None:
    """The bin of ``value`` (the last one closed above); None below the scale."""
    lower = edges(kind)
    for i in range(len(lower) - 1):
        if lower[i] <= value < lower[i + 1]:
            return i
    return len(lower) - 1 if value >= lower[-1] else None


@dataclass(frozen=True)
class Standing:
    """What one run with a standing adds to its task's counts."""

    task_id: str
    copy: bool
    held: bool
    collected: bool
    own_trace: bool
    values: Mapping[str, float | None]
    recommendation: str | None
    unjudged: bool
    choices: Mapping[str, str | None]

    def counts(self) -> Counter[str]:
        found: Counter[str] = Counter()
        for name, value in self.choices.items():
            if value is not None:
                found[f"choice {name} {value}"] += 1
        if self.copy:
            return found
        found["rows"] += 1
        found["held"] += self.held
        found["collected"] += self.collected
        found["held collected"] += self.held and self.collected
        found["own trace"] += self.own_trace
        if self.held:
            return found
        for scope in SCOPES[: 1 + self.collected]:
            for kind, figure in self.values.items():
                if figure is None:
                    continue
                units = round(figure * SCALE)
                found[value_key(kind, scope, "values")] += 1
                found[value_key(kind, scope, "sum")] += units
                found[value_key(kind, scope, "squares")] += units * units
                if (where := bin_of(kind, figure)) is not None:
                    found[value_key(kind, scope, f"bin {where}")] += 1
            found[f"recommendation {scope} {self.recommendation or 'none'}"] += 1
            found[f"unjudged {scope}"] += self.unjudged
        return found


Snapshot = dict[str, Standing]
"""Runs with a standing, by id, as counted at one moment (a run without one is absent)."""


def snapshot(session: Session, submission_ids: Sequence[str]) -> Snapshot:
    """What each of the runs adds to its task's counts now (one statement per
    `evalq.store.chunks.CHUNK` runs)."""
    found: Snapshot = {}
    for chunk in chunks(submission_ids):
        rows = session.execute(
            select(
                R.submission_id,
                R.task_id,
                R.copy_of,
                S.review,
                S.trace_provenance,
                R.recommendation,
                R.unjudged,
                *(getattr(S, name) for name in CHOICES),
                *VALUES.values(),
            )
            .join(S, S.id == R.submission_id)
            .where(R.submission_id.in_(chunk))
        )
        for sid, task_id, copy_of, review, provenance, label, unjudged, *rest in rows:
            choices, values = rest[: len(CHOICES)], rest[len(CHOICES) :]
            found[sid] = Standing(
                task_id=task_id,
                copy=copy_of is not None,
                held=review == "flagged",
                collected=provenance == "collected",
                own_trace=provenance == "submitted",
                values={
                    kind: None if value is None else float(value)
                    for kind, value in zip(VALUES, values, strict=True)
                },
                recommendation=label,
                unjudged=bool(unjudged),
                choices=dict(zip(CHOICES, choices, strict=True)),
            )
    return found


def add(session: Session, before: Snapshot, after: Snapshot) -> None:
    """Add to the counts what changed between two snapshots of the same runs (a run in one
    and not the other came or went): one upsert, whatever the task's size."""
    change: Counter[tuple[str, str]] = Counter()
    for sid in before.keys() | after.keys():
        if (then := before.get(sid)) is not None:
            change.subtract({(then.task_id, k): n for k, n in then.counts().items()})
        if (now := after.get(sid)) is not None:
            change.update({(now.task_id, k): n for k, n in now.counts().items()})
    rows = [
        {"task_id": task_id, "key": key, "count": n}
        for (task_id, key), n in sorted(change.items())
        if n
    ]
    if not rows:
        return
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    statement = insert(T)
    session.execute(
        statement.on_conflict_do_update(
            index_elements=["task_id", "key"], set_={"count": T.count + statement.excluded.count}
        ),
        rows,
    )


def counts(session: Session, *, task_id: str) -> Counter[str]:
    """The task's counts (an index range of its own rows: a few hundred, whatever its size)."""
    rows = session.execute(select(T.key, T.count).where(T.task_id == task_id))
    return Counter({key: int(n) for key, n in rows})


def choices(found: Mapping[str, int]) -> dict[str, list[str]]:
    """The filter values among ``found`` (`counts`), each sorted."""
    values: dict[str, list[str]] = {name: [] for name in CHOICES}
    for key, n in found.items():
        if key.startswith("choice ") and n > 0:
            _, name, value = key.split(" ", 2)
            values[name].append(value)
    return {name: sorted(found) for name, found in values.items()}


def _held() -> ColumnElement[bool]:
    return and_(S.review.is_not(None), S.review == "flagged")


def _collected() -> ColumnElement[bool]:
    return and_(S.trace_provenance.is_not(None), S.trace_provenance == "collected")


def _sum(condition: ColumnElement[bool], value: Any = 1) -> Any:
    return func.sum(case((condition, value), else_=0))


def recount(session: Session, *, task_id: str) -> None:
    """Count the task again from its standings (the refresh's whole-task step, set-wise: one
    DELETE, five aggregate statements (the counts, the labels, each filter field), one INSERT
    of the counts)."""
    session.execute(delete(T).where(T.task_id == task_id))
    kept = R.copy_of.is_(None)
    not_held = or_(S.review.is_(None), S.review != "flagged")
    ranked = {"any": and_(kept, not_held), "collected": and_(kept, not_held, _collected())}
    columns: dict[str, Any] = {
        "rows": _sum(kept),
        "held": _sum(and_(kept, _held())),
        "collected": _sum(and_(kept, _collected())),
        "held collected": _sum(and_(kept, _held(), _collected())),
        "own trace": _sum(
            and_(kept, S.trace_provenance.is_not(None), S.trace_provenance == "submitted")
        ),
    }
    for scope, where in ranked.items():
        columns[f"unjudged {scope}"] = _sum(and_(where, R.unjudged))
        for kind, value in VALUES.items():
            units = cast(func.round(value * SCALE), BigInteger)
            counted = and_(where, value.is_not(None))
            columns[value_key(kind, scope, "values")] = _sum(counted)
            columns[value_key(kind, scope, "sum")] = _sum(counted, units)
            columns[value_key(kind, scope, "squares")] = _sum(counted, units * units)
            lower = edges(kind)
            for i, low in enumerate(lower):
                inside = (
                    value >= low
                    if i == len(lower) - 1
                    else and_(value >= low, value < lower[i + 1])
                )
                columns[value_key(kind, scope, f"bin {i}")] = _sum(and_(counted, inside))
    joined = select().select_from(R).join(S, S.id == R.submission_id).where(R.task_id == task_id)
    totals = session.execute(joined.add_columns(*columns.values())).one()
    found: Counter[str] = Counter(
        {key: int(n or 0) for key, n in zip(columns, totals, strict=True)}
    )
    labels = session.execute(
        joined.add_columns(R.recommendation, *(_sum(where) for where in ranked.values()))
        .where(kept)
        .group_by(R.recommendation)
    )
    for label, *per_scope in labels:
        for scope, n in zip(ranked, per_scope, strict=True):
            found[f"recommendation {scope} {label or 'none'}"] += int(n or 0)
    for name in CHOICES:
        column = getattr(S, name)
        for value, n in session.execute(
            joined.add_columns(column, func.count()).where(column.is_not(None)).group_by(column)
        ):
            found[f"choice {name} {value}"] += int(n)
    rows = [{"task_id": task_id, "key": key, "count": n} for key, n in sorted(found.items()) if n]
    if rows:
        session.execute(T.__table__.insert(), rows)  # type: ignore[attr-defined]
