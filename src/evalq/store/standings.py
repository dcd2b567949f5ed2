"""The standings table (`StandingRow`): written by `evalq.read.standings`, ranked here in SQL.

A page of a board read live is a few statements over the task's standings joined to their
submissions (for the filters, the review state and the copy mark): a summary (`summary`:
counts, the exact moments of the ranking value, the agents the baseline counts, PeerRead's
recommendations) and the page itself (`ranked_page`), whose ranks, ties and category ranks are
counts of the kept rows above them on indexes (no window over the task), so only the rows
listed leave the database. The order is
`evalq.scoring.kinds.sort_key`'s, column by column. The refresh stores the same ranking of the
unfiltered board as each run's place (`store_places`), which a quiet board's pages read as an
index range (`placed_page`); a Scylla or suite board's whole-task figures are kept beside it
(`store_figures`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import product
from typing import Any

from sqlalchemy import (
    BigInteger,
    Table,
    and_,
    bindparam,
    case,
    cast,
    delete,
    false,
    func,
    literal,
    or_,
    select,
    true,
    union_all,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session, aliased
from sqlalchemy.sql.elements import ColumnElement

from evalq.scoring.kinds import KindRule
from evalq.store import run_metadata, tallies, task_tallies
from evalq.store.models import BoardFiguresRow, EvaluationRow, StandingRow, SubmissionRow
from evalq.store.queries import EVALUATED, may_copy

S, R = SubmissionRow, StandingRow
SCALE = task_tallies.SCALE
CATEGORY_KEYS = ("efficiency_key", "speed_key", "cost_key", "correctness_key")
_TABLE: Table = StandingRow.__table__  # type: ignore[assignment]


def upsert(session: Session, rows: Sequence[Mapping[str, Any]]) -> None:
    """Insert ``rows`` or replace the stored ones with the same submission (one statement)."""
    if not rows:
        return
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    statement = insert(_TABLE)  # executed with many rows: compiled once, cached
    columns = [c for c in rows[0] if c != "submission_id"]
    session.execute(
        statement.on_conflict_do_update(
            index_elements=["submission_id"],
            set_={c: statement.excluded[c] for c in columns},
        ),
        list(rows),
    )


def rewrite(session: Session, rows: Sequence[Mapping[str, Any]]) -> None:
    """Rewrite the given columns of existing rows (each names its ``submission_id``)."""
    if rows:
        session.execute(
            _TABLE.update().where(_TABLE.c.submission_id == bindparam("sid")),
            [
                {"sid": r["submission_id"], **{k: v for k, v in r.items() if k != "submission_id"}}
                for r in rows
            ],
        )


def remove(session: Session, *, submission_ids: Sequence[str]) -> None:
    """Drop the rows of these submissions (their evaluation failed, or is gone)."""
    for start in range(0, len(submission_ids), 500):
        chunk = list(submission_ids[start : start + 500])
        session.execute(delete(StandingRow).where(StandingRow.submission_id.in_(chunk)))


def _evaluated(task_id: str) -> ColumnElement[bool]:
    return and_(S.task_id == task_id, S.status.in_(EVALUATED))


@dataclass(frozen=True)
class Currency:
    """How a task's standings stand against a basis: its evaluated runs, the rows stored on
    that basis, and every row stored."""

    evaluated: int
    current: int
    total: int


def is_current(session: Session, *, task_id: str, basis: str, task_hash: str) -> bool:
    """Whether every evaluated run of the task has a row on this basis, and no other row is
    stored (one statement of three index counts)."""
    found = currency(session, task_id=task_id, basis=basis, task_hash=task_hash)
    return found.evaluated == found.current == found.total


def currency(session: Session, *, task_id: str, basis: str, task_hash: str) -> Currency:
    """`Currency` of the task's standings on this basis (one statement of three index-only
    counts: the evaluated runs are counted by status on the submissions' (task, status) index,
    not joined to their evaluations, which the merge stores with the status; the join made this
    count most of a live board read's work at 100,000 runs)."""
    evaluated = select(func.count()).select_from(S).where(_evaluated(task_id))
    current = select(func.count()).where(
        R.task_id == task_id, R.basis == basis, R.task_hash == task_hash
    )
    total = select(func.count()).where(R.task_id == task_id)
    counts = session.execute(
        select(evaluated.scalar_subquery(), current.scalar_subquery(), total.scalar_subquery())
    ).one()
    return Currency(int(counts[0]), int(counts[1]), int(counts[2]))


def has_standings(session: Session, *, task_id: str) -> bool:
    """Whether any run of the task has a standing (one index probe)."""
    return session.scalar(select(R.submission_id).where(R.task_id == task_id).limit(1)) is not None


def bases(session: Session, *, task_id: str) -> dict[str, tuple[str, str]]:
    """Submission id -> (basis, task hash) of every stored row of the task."""
    rows = session.execute(
        select(R.submission_id, R.basis, R.task_hash).where(R.task_id == task_id)
    )
    return {sid: (basis, task_hash) for sid, basis, task_hash in rows}


def evaluated_ids(session: Session, *, task_id: str) -> list[str]:
    """The ids of the task's evaluated (done or degraded) submissions that have an evaluation."""
    return list(
        session.scalars(
            select(S.id)
            .join(EvaluationRow, EvaluationRow.submission_id == S.id)
            .where(_evaluated(task_id))
        )
    )


def evaluations_of(
    session: Session, *, submission_ids: Sequence[str]
) -> dict[str, tuple[SubmissionRow, EvaluationRow]]:
    """The submissions with their evaluations, by id."""
    rows = session.execute(
        select(S, EvaluationRow)
        .join(EvaluationRow, EvaluationRow.submission_id == S.id)
        .where(S.id.in_(list(submission_ids)))
    )
    return {sub_row.id: (sub_row, evaluation) for sub_row, evaluation in rows}


STORED_KEYS = (R.arena_key, R.efficiency_key, R.speed_key, R.cost_key, R.correctness_key)
"""The Arena columns a baseline move can change (`usage_to_rescore` reads them too, so that only
the rows whose values moved are written)."""


def usage_to_rescore(session: Session, *, task_id: str, basis: str, task_hash: str) -> list[Any]:
    """What a baseline move rescores from, for every row of the task stored for this definition
    on another basis (one statement): usage columns, stored correctness, problem and keys."""
    return list(
        session.execute(
            select(
                S.id,
                S.total_tokens,
                S.tool_calls,
                S.iterations,
                S.execution_time,
                S.cost_usd,
                R.correctness,
                R.problem,
                *STORED_KEYS,
            )
            .join(R, R.submission_id == S.id)
            .where(R.task_id == task_id, R.task_hash == task_hash, R.basis != basis)
        )
    )


def rebase(session: Session, *, task_id: str, basis: str, task_hash: str) -> None:
    """Mark every row of the task stored for this definition as scored on ``basis`` (one
    statement; the rows whose values moved are rewritten first)."""
    session.execute(
        update(R)
        .where(R.task_id == task_id, R.task_hash == task_hash, R.basis != basis)
        .values(basis=basis)
    )


@dataclass(frozen=True)
class Kept:
    """Which of a task's standings a board keeps (each field given must match)."""

    task_id: str
    tool: str | None = None
    model: str | None = None
    variant: str | None = None
    status: str | None = None
    copies: frozenset[str] = frozenset()
    """Ids to leave out: the copies of earlier runs."""
    traced_only: bool = False
    """Rank only the runs whose usage comes from a collected trace (the profile's
    ``arena.usage``); the others are listed apart, as held runs are."""
    metadata: tuple[tuple[str, str], ...] = ()
    """``(key, value)`` entries the run's metadata must hold (`evalq.store.run_metadata`)."""

    def ranked(self, *, include_held: bool, r: Any = R, s: Any = S) -> list[ColumnElement[bool]]:
        """The conditions of a ranked row: kept, not held (unless ``include_held``), and its
        trace collected when only those are ranked (on ``r`` and ``s``: the standings and
        submissions, or aliases of them)."""
        found = self.where(r, s)
        found += [] if include_held else [not_held(s)]
        found += [collected(s)] if self.traced_only else []
        return found

    def apart(self, *, include_held: bool) -> ColumnElement[bool] | None:
        """What lists a kept row apart, unranked: held (unless ``include_held``), or its trace
        not collected when only collected usage is ranked; None when nothing does."""
        found = [] if include_held else [held()]
        found += [~collected()] if self.traced_only else []
        return or_(*found) if found else None

    def where(self, r: Any = R, s: Any = S) -> list[ColumnElement[bool]]:
        """The conditions, on the standings joined to their submissions."""
        found: list[ColumnElement[bool]] = [r.task_id == self.task_id]
        found += [s.tool == self.tool] if self.tool else []
        found += [s.model == self.model] if self.model else []
        found += [s.variant == self.variant] if self.variant else []
        found += [r.status == self.status] if self.status else []
        found += run_metadata.holds(self.metadata, r.submission_id)
        if self.copies:
            # written into the statement: a page repeats the condition in each of its counts,
            # and bound parameters would multiply past SQLite's bound on them
            ids: Any = bindparam(
                "copies", sorted(self.copies), expanding=True, literal_execute=True, unique=True
            )
            found.append(r.submission_id.not_in(ids))
        return found


def collected(s: Any = S) -> ColumnElement[bool]:
    """A run whose usage comes from a trace the OTLP intake collected under a key its task
    trusts (`evalq.read.usage.usage_source` ``collected-trace``)."""
    provenance: ColumnElement[Any] = s.trace_provenance
    return and_(provenance.is_not(None), provenance == "collected")


def own_trace(s: Any = S) -> ColumnElement[bool]:
    """A run whose trace is its submitter's own (`evalq.read.usage.usage_source` ``own-trace``)."""
    provenance: ColumnElement[Any] = s.trace_provenance
    return and_(provenance.is_not(None), provenance == "submitted")


def held() -> ColumnElement[bool]:
    """A run held for review (`evalq.read.view.is_held`)."""
    return and_(S.review.is_not(None), S.review == "flagged")


def not_held(s: Any = S) -> ColumnElement[bool]:
    return or_(s.review.is_(None), s.review != "flagged")


def order_of(rule: KindRule) -> tuple[list[Any], list[Any]]:
    """`sort_key` of the kind as ORDER BY terms, and the same terms to group ties by."""
    if rule.kind == "suite":
        gate = case((R.suite_passed == true(), 0), else_=1)
        parts = [R.suite_passed.is_(None), R.partial, gate, R.suite_key.is_(None), R.suite_key]
        return [*parts[:4], R.suite_key.desc()], parts
    value = {"peerread": R.peerread_key, "scylla": R.scylla_key}.get(rule.kind, R.arena_key)
    parts = [value.is_(None), R.partial, value]
    return [value.is_(None), R.partial, value.desc()], parts


def value_of(rule: KindRule) -> Any:
    """The column of the kind's ranking value (as rounded for ranking)."""
    return task_tallies.VALUES[rule.kind]


@dataclass(frozen=True)
class Summary:
    """What a board says about all its kept rows."""

    ranked: int
    held: int
    values: int
    mean: float | None
    squares: float
    """Sum of squared deviations of the ranking values from their mean."""
    agents: dict[tuple[str, str], int]
    """(tool, model) -> runs the task's baseline counts (not held, not copies; no filter)."""
    recommendations: dict[str, int]
    unjudged: int
    unranked: int = 0
    """Rows listed apart, not held, because their trace was not collected (`Kept.traced_only`)."""
    self_reported: int = 0
    """Kept rows (ranked or apart) whose usage is not from a collected trace."""
    own_trace: int = 0
    """Those of them that carry a trace of their own."""

    @property
    def apart(self) -> int:
        """Rows listed after the ranked ones: held, or unranked for their usage."""
        return self.held + self.unranked

    def as_json(self) -> dict[str, Any]:
        """The summary as stored with a board's figures (agents as ``[tool, model, runs]``)."""
        return {
            "ranked": self.ranked,
            "held": self.held,
            "values": self.values,
            "mean": self.mean,
            "squares": self.squares,
            "agents": [[tool, model, runs] for (tool, model), runs in self.agents.items()],
            "recommendations": self.recommendations,
            "unjudged": self.unjudged,
            "unranked": self.unranked,
            "self_reported": self.self_reported,
            "own_trace": self.own_trace,
        }

    @classmethod
    def of_json(cls, data: Mapping[str, Any]) -> Summary:
        """The summary `as_json` stored."""
        return cls(
            ranked=int(data["ranked"]),
            held=int(data["held"]),
            values=int(data["values"]),
            mean=data["mean"],
            squares=float(data["squares"]),
            agents={(tool, model): int(runs) for tool, model, runs in data["agents"]},
            recommendations=dict(data["recommendations"]),
            unjudged=int(data["unjudged"]),
            unranked=int(data["unranked"]),
            self_reported=int(data["self_reported"]),
            own_trace=int(data["own_trace"]),
        )


PLACES = (
    "place",
    "place_tied",
    "efficiency_place",
    "speed_place",
    "cost_place",
    "correctness_place",
)
"""The columns of a run's stored place on its task's unfiltered board."""


def store_places(session: Session, rule: KindRule, kept: Kept) -> None:
    """Rank the task's unfiltered board (``kept``: the task and its copies; held runs out) in
    the database and store each ranked run's place; every other run's place is cleared (two
    statements: a clear, and an UPDATE from the ranking's window functions)."""
    session.execute(update(R).where(R.task_id == kept.task_id).values(dict.fromkeys(PLACES, None)))
    order, parts = order_of(rule)
    ranked = (
        select(
            R.submission_id.label("sid"),
            func.rank().over(order_by=order).label("rank"),
            func.count().over(partition_by=parts).label("tied"),
            *(
                func.rank().over(order_by=getattr(R, key).desc()).label(key)
                for key in CATEGORY_KEYS
            ),
        )
        .join(S, S.id == R.submission_id)
        .where(*kept.ranked(include_held=False))
        .subquery()
    )
    session.execute(
        update(R)
        .where(R.submission_id == ranked.c.sid)
        .values(
            place=ranked.c.rank,
            place_tied=ranked.c.tied,
            **{key.replace("_key", "_place"): getattr(ranked.c, key) for key in CATEGORY_KEYS},
        )
    )


def placed_page(session: Session, *, task_id: str, limit: int, offset: int) -> list[Placed]:
    """The ranked rows of the unfiltered board from ``offset`` (at most ``limit``), as the
    refresh placed them: an index range, whatever the task's size."""
    rows = session.execute(
        select(R.submission_id, *(getattr(R, name) for name in PLACES))
        .where(R.task_id == task_id, R.place.is_not(None))
        .order_by(R.place, R.submission_id)
        .limit(limit)
        .offset(offset)
    )
    return [
        Placed(
            row[0], int(row[1]), int(row[2]), (int(row[3]), int(row[4]), int(row[5]), int(row[6]))
        )
        for row in rows
    ]


def agent_runs(
    session: Session, kept: Kept, *, agents: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], int]:
    """How many of ``kept``'s ranked runs (held runs out) each of ``agents`` (tool, model) has;
    an agent with none is absent."""
    if not agents:
        return {}
    if not kept.traced_only and unfiltered(kept):
        # the unfiltered board: its agents' tallies (kept at merge), not a count of the task
        tallied = tallies.counted_runs(session, task_id=kept.task_id)
        return {agent: tallied[agent] for agent in agents if agent in tallied}
    who = or_(*(and_(S.tool == tool, S.model == model) for tool, model in agents))
    rows = session.execute(
        select(S.tool, S.model, func.count())
        .select_from(R)
        .join(S, S.id == R.submission_id)
        .where(*kept.ranked(include_held=False), who)
        .group_by(S.tool, S.model)
    )
    return {(tool, model): int(count) for tool, model, count in rows}


@dataclass(frozen=True)
class Leader:
    """The run in first place on a task's unfiltered board, as the last refresh placed it."""

    submission_id: str
    tool: str | None
    model: str | None
    variant: str | None
    tied: int
    """How many runs share first place (1: a clear leader)."""

    @property
    def text(self) -> str:
        """In a line: the agent (tool / model, else the variant), the run, and how many tie."""
        who = " / ".join(part for part in (self.tool, self.model) if part) or self.variant
        line = f"{who} ({self.submission_id})" if who else self.submission_id
        return line + (f", {self.tied - 1} more tied" if self.tied > 1 else "")


def leaders(session: Session, *, task_ids: Sequence[str]) -> dict[str, Leader]:
    """Each of ``task_ids``' first-placed run (the lowest id among tied ones); a task whose
    board holds no placed run is absent. One index range per task (ix_standings_task_place)."""
    found: dict[str, Leader] = {}
    for start in range(0, len(task_ids), 500):  # SQLite's bound on parameters
        rows = session.execute(
            select(R.task_id, R.submission_id, S.tool, S.model, S.variant, R.place_tied)
            .join(S, S.id == R.submission_id)
            .where(R.task_id.in_(task_ids[start : start + 500]), R.place == 1)
            .order_by(R.task_id, R.submission_id)
        )
        for task_id, sid, tool, model, variant, tied in rows:
            found.setdefault(task_id, Leader(sid, tool, model, variant, int(tied or 1)))
    return found


def unfiltered(kept: Kept) -> bool:
    """Whether ``kept`` is the task's whole board (its copies out, no filter): the one the
    task's tallies count (`evalq.store.task_tallies`)."""
    return not (kept.tool or kept.model or kept.variant or kept.status or kept.metadata)


def tallied_summary(session: Session, rule: KindRule, kept: Kept) -> Summary:
    """`summary` of the unfiltered board (held runs out) from the task's tallies, kept at
    merge: two index ranges, whatever the task's size."""
    found = task_tallies.counts(session, task_id=kept.task_id)
    scope = task_tallies.scope_of(kept.traced_only)
    rows, held_n, collected_n = found["rows"], found["held"], found["collected"]
    usage_n = (rows - collected_n) - (held_n - found["held collected"]) if kept.traced_only else 0

    def figure(what: str) -> int:
        return found[task_tallies.value_key(rule.kind, scope, what)]

    values, total, squared = figure("values"), figure("sum"), figure("squares")
    recommendations: dict[str, int] = {}
    if rule.kind == "peerread":
        prefix = f"recommendation {scope} "
        recommendations = {
            key.removeprefix(prefix): n
            for key, n in found.items()
            if key.startswith(prefix) and n > 0
        }
    return Summary(
        ranked=rows - held_n - usage_n,
        held=held_n,
        unranked=usage_n,
        self_reported=rows - collected_n,
        own_trace=found["own trace"],
        values=values,
        mean=None if not values else (total / SCALE) / values,
        squares=0.0 if not values else (values * squared - total**2) / (values * SCALE * SCALE),
        agents=tallies.counted_runs(session, task_id=kept.task_id),
        recommendations=recommendations,
        unjudged=found[f"unjudged {scope}"] if rule.kind == "peerread" else 0,
    )


def summary(
    session: Session, rule: KindRule, kept: Kept, *, include_held: bool, copies: frozenset[str]
) -> Summary:
    """Counts and moments of the board, the agents the baseline counts, and PeerRead's
    recommendations: the task's tallies for the unfiltered board (`tallied_summary`), else
    one aggregate statement each."""
    if unfiltered(kept) and not include_held:
        return tallied_summary(session, rule, kept)
    return aggregated_summary(session, rule, kept, include_held=include_held)


def aggregated_summary(
    session: Session, rule: KindRule, kept: Kept, *, include_held: bool
) -> Summary:
    """`summary` counted over the kept rows (a filtered board's; the tallies' definition)."""
    joined = select().select_from(R).join(S, S.id == R.submission_id)
    where = kept.where()
    ranked_where = kept.ranked(include_held=include_held)
    value = value_of(rule)
    apart = kept.apart(include_held=include_held)
    counted_value = value if apart is None else case((~apart, value))
    # The values are stored rounded to 4 decimals: as whole ten-thousandths their sums are
    # exact integers in either database, so the mean and the squared deviations are the exact
    # ones (as `statistics` computes them), not a float sum's, whatever the order of the rows.
    units = cast(func.round(counted_value * SCALE), BigInteger)
    held_apart = held() if not include_held else false()
    usage_apart = and_(~collected(), ~held_apart) if kept.traced_only else false()
    n, held_n, usage_n, self_reported, own, values, total, squared = session.execute(
        joined.add_columns(
            func.count(),
            func.sum(case((held_apart, 1), else_=0)),
            func.sum(case((usage_apart, 1), else_=0)),
            func.sum(case((~collected(), 1), else_=0)),
            func.sum(case((own_trace(), 1), else_=0)),
            func.count(counted_value),
            func.sum(units),
            func.sum(units * units),
        ).where(*where)
    ).one()
    values = int(values or 0)
    mean = None if not values else (int(total) / SCALE) / values
    squares = (
        0.0 if not values else (values * int(squared) - int(total) ** 2) / (values * SCALE * SCALE)
    )
    held_n, usage_n = int(held_n or 0), int(usage_n or 0)
    # the runs the baseline counts, by agent: the task's tallies (kept at merge)
    agents = tallies.counted_runs(session, task_id=kept.task_id)
    recommendations: dict[str, int] = {}
    unjudged = 0
    if rule.kind == "peerread":
        for label, unjudged_n, count in session.execute(
            joined.add_columns(
                R.recommendation, func.sum(case((R.unjudged, 1), else_=0)), func.count()
            )
            .where(*ranked_where)
            .group_by(R.recommendation)
        ):
            recommendations[label or "none"] = count
            unjudged += int(unjudged_n or 0)
    return Summary(
        ranked=int(n) - held_n - usage_n,
        held=held_n,
        unranked=usage_n,
        self_reported=int(self_reported or 0),
        own_trace=int(own or 0),
        values=int(values or 0),
        mean=None if mean is None else float(mean),
        squares=squares,
        agents=agents,
        recommendations=recommendations,
        unjudged=unjudged,
    )


@dataclass(frozen=True)
class Placed:
    """A listed row with its place among the kept rows (counted, or stored by the refresh)."""

    submission_id: str
    rank: int
    tied: int
    categories: tuple[int, int, int, int]


@dataclass(frozen=True)
class Part:
    """One term of a kind's board order (`order_of`), as the counts compare it: ``how`` is
    "isnull" (a value first, a missing one after), "asc" (a flag, false first), "gate" (a
    suite passed first) or "desc" (a greater value first)."""

    how: str
    column: Any

    def of(self, value: Any) -> Any:
        """The term's key from its column's value on one row (as Python compares it)."""
        if self.how == "isnull":
            return value is None
        if self.how == "asc":
            return bool(value)
        if self.how == "gate":
            return 0 if value is True or value == 1 else 1
        return value

    def equal(self, key: Any, column: ColumnElement[Any]) -> ColumnElement[bool]:
        """A row whose term's key is ``key`` (``column``: this term's column, maybe aliased)."""
        if self.how == "isnull":
            return column.is_(None) if key else column.is_not(None)
        if self.how == "asc":
            same: ColumnElement[bool] = column == key
            return same
        if self.how == "gate":
            return column == true() if key == 0 else or_(column.is_(None), column == false())
        return column.is_(None) if key is None else column == key

    def better(self, key: Any, column: ColumnElement[Any]) -> ColumnElement[bool] | None:
        """A row whose term's key comes before ``key``; None when none can."""
        if self.how == "isnull":
            return column.is_not(None) if key else None
        if self.how == "asc":
            return column == false() if key else None
        if self.how == "gate":
            return column == true() if key == 1 else None
        return None if key is None else column > key


def parts_of(rule: KindRule) -> list[Part]:
    """`order_of`'s terms, each as the counts of a place compare it."""
    if rule.kind == "suite":
        return [
            Part("isnull", "suite_passed"),
            Part("asc", "partial"),
            Part("gate", "suite_passed"),
            Part("isnull", "suite_key"),
            Part("desc", "suite_key"),
        ]
    value = value_of(rule).key
    return [Part("isnull", value), Part("asc", "partial"), Part("desc", value)]


Key = tuple[Any, ...]


def _key_of(parts: Sequence[Part], row: Any) -> Key:
    return tuple(part.of(getattr(row, part.column)) for part in parts)


def _equal(parts: Sequence[Part], key: Key, r: Any) -> list[ColumnElement[bool]]:
    return [part.equal(k, getattr(r, part.column)) for part, k in zip(parts, key, strict=True)]


def _better(parts: Sequence[Part], key: Key, r: Any) -> list[list[ColumnElement[bool]]]:
    """The rows ranked above ``key``, as disjoint conjunctions (one per term that decides):
    each is an index range of the task's standings."""
    found = []
    for i, part in enumerate(parts):
        above = part.better(key[i], getattr(r, part.column))
        if above is not None:
            found.append([*_equal(parts[:i], key[:i], r), above])
    return found


DOMAINS = {"isnull": (False, True), "asc": (False, True), "gate": (0, 1)}
"""The keys of each term that is not a value, in the board's order."""


def _page_rows(
    session: Session,
    parts: Sequence[Part],
    kept: Kept,
    *,
    include_held: bool,
    limit: int,
    offset: int,
) -> list[Any]:
    """The kept ranked rows from ``offset`` (at most ``limit``) in board order, with their key
    and category columns: the board is cut into segments by its terms that are not the value
    (missing, partial, gated...), each read in value order from the index on (task, value) up
    to ``offset + limit`` rows, and the segments put end to end (one statement)."""
    *flags, value = parts
    columns = sorted({part.column for part in parts})
    members = []
    for number, prefix in enumerate(product(*(DOMAINS[part.how] for part in flags))):
        segment = (
            select(
                R.submission_id,
                *(getattr(R, c) for c in columns),
                *(getattr(R, k) for k in CATEGORY_KEYS),
                literal(number).label("segment"),
            )
            .join(S, S.id == R.submission_id)
            .where(*kept.ranked(include_held=include_held), *_equal(flags, prefix, R))
            .order_by(getattr(R, value.column).desc(), R.submission_id)
            .limit(offset + limit)
            .subquery()
        )
        members.append(select(segment))
    board = union_all(*members).subquery()
    return list(
        session.execute(
            select(board)
            .order_by(board.c.segment, board.c[value.column].desc(), board.c.submission_id)
            .limit(limit)
            .offset(offset)
        )
    )


def ranked_page(
    session: Session,
    rule: KindRule,
    kept: Kept,
    *,
    include_held: bool,
    limit: int,
    offset: int,
) -> list[Placed]:
    """The ranked rows from ``offset`` (at most ``limit``), by rank then id, each with its
    competition rank, how many rows tie with it, and its four Arena category ranks.

    A rank is counted, not windowed over the task: the page's rows in board order
    (`_page_rows`: index ranges up to the page's end), then one statement of counts: the rows ranked
    above the page's first row and the rows tied with its first and last keys (the ranks and
    ties of the rows between follow from the page itself); and one statement of each listed
    row's four category ranks (1 + the kept rows with a greater category key). Three
    statements whatever the task's size."""
    parts = parts_of(rule)
    rows = _page_rows(session, parts, kept, include_held=include_held, limit=limit, offset=offset)
    if not rows:
        return []
    keys = [_key_of(parts, row) for row in rows]
    first, last = keys[0], keys[-1]

    def counted(conditions: Any) -> Any:
        """How many kept ranked rows meet ``conditions(alias of the standings)``."""
        r, s = aliased(R), aliased(S)
        return (
            select(func.count())
            .select_from(r)
            .join(s, s.id == r.submission_id)
            .where(*kept.ranked(include_held=include_held, r=r, s=s), *conditions(r))
            .scalar_subquery()
        )

    decided = len(_better(parts, first, R))
    above = [counted(lambda r, i=i: _better(parts, first, r)[i]) for i in range(decided)]
    tied = [counted(lambda r: _equal(parts, first, r)), counted(lambda r: _equal(parts, last, r))]
    counts = session.execute(select(*above, *tied)).one()
    first_rank = 1 + sum(int(n) for n in counts[:decided])
    first_tied, last_tied = int(counts[-2]), int(counts[-1])
    # each row's rank: its tie group's first place (the first group's counted above)
    ranks: list[int] = []
    for i, key in enumerate(keys):
        ranks.append(
            first_rank if key == first else ranks[-1] if key == keys[i - 1] else offset + i + 1
        )
    sizes: dict[Key, int] = {}
    for key in keys:
        sizes[key] = sizes.get(key, 0) + 1
    sizes[last] = last_tied
    sizes[first] = first_tied
    categories = category_ranks(session, kept, include_held=include_held, rows=rows)
    return [
        Placed(row.submission_id, ranks[i], sizes[keys[i]], categories[row.submission_id])
        for i, row in enumerate(rows)
    ]


def category_ranks(
    session: Session, kept: Kept, *, include_held: bool, rows: Sequence[Any]
) -> dict[str, tuple[int, int, int, int]]:
    """Each listed row's four Arena category ranks among the kept ranked rows: 1 + how many
    have a greater key (standard competition ranking), one statement of correlated counts
    over the listed rows."""
    if len(rows) > COUNTED_CATEGORY_ROWS:
        return _sorted_category_ranks(session, kept, include_held=include_held, rows=rows)
    r, s = aliased(R), aliased(S)
    above = [
        select(func.count())
        .select_from(r)
        .join(s, s.id == r.submission_id)
        .where(*kept.ranked(include_held=include_held, r=r, s=s), getattr(r, key) > getattr(R, key))
        .correlate(R)
        .scalar_subquery()
        for key in CATEGORY_KEYS
    ]
    found = session.execute(
        select(R.submission_id, *above).where(
            R.submission_id.in_([row.submission_id for row in rows])
        )
    )
    return {sid: (1 + int(a), 1 + int(b), 1 + int(c), 1 + int(d)) for sid, a, b, c, d in found}


def ranked_runs(
    session: Session, kept: Kept, *, include_held: bool
) -> list[tuple[str, str | None, str | None]]:
    """Every ranked row of ``kept``: its id, variant and content digest (narrow columns, for
    the figures a filtered board draws over its own runs)."""
    rows = session.execute(
        select(R.submission_id, S.variant, S.content_hash)
        .join(S, S.id == R.submission_id)
        .where(*kept.ranked(include_held=include_held))
    )
    return [(sid, variant, digest) for sid, variant, digest in rows]


COUNTED_CATEGORY_ROWS = 1_000
"""Most listed rows whose category ranks are counted row by row (an index range each); a
longer page (a board read whole) sorts every kept row's keys once instead."""


def _sorted_category_ranks(
    session: Session, kept: Kept, *, include_held: bool, rows: Sequence[Any]
) -> dict[str, tuple[int, int, int, int]]:
    """`category_ranks` from every kept ranked row's four keys, read once and sorted: for a
    page long enough that counting above each of its rows would cost more."""
    every = session.execute(
        select(*(getattr(R, key) for key in CATEGORY_KEYS))
        .join(S, S.id == R.submission_id)
        .where(*kept.ranked(include_held=include_held))
    ).all()
    columns = [sorted(float(row[i]) for row in every) for i in range(len(CATEGORY_KEYS))]
    n = len(every)

    def rank(i: int, value: Any) -> int:
        return 1 + n - bisect_right(columns[i], float(value))

    return {
        row.submission_id: (
            rank(0, row.efficiency_key),
            rank(1, row.speed_key),
            rank(2, row.cost_key),
            rank(3, row.correctness_key),
        )
        for row in rows
    }


def held_page(
    session: Session, kept: Kept, *, limit: int, offset: int, include_held: bool = False
) -> list[str]:
    """The ids of the rows listed apart (held, or unranked for their usage: `Kept.apart`)
    from ``offset`` (at most ``limit``), by id."""
    apart = kept.apart(include_held=include_held)
    if apart is None:
        return []
    # driven from the submissions' (task, review, id) index: a range over the held runs in
    # id order, not a walk of the task's standings
    return list(
        session.scalars(
            select(S.id)
            .join(R, R.submission_id == S.id)
            .where(S.task_id == kept.task_id, *kept.where(), apart)
            .order_by(S.id)
            .limit(limit)
            .offset(offset)
        )
    )


def repeated_runs(session: Session, *, task_id: str) -> list[str]:
    """The ids of the task's evaluated runs whose content, or whose agent's shape (content
    without usage), was sent more than once (`may_copy`, index-only groupings), and the runs the
    refresh marked as copies (``copy_of``: near-copies by similarity too) with their originals:
    the only ones that can be copies or near-copies."""
    evaluated = _evaluated(task_id)
    originals = select(S.copy_of).where(evaluated, S.copy_of.is_not(None))
    return list(
        session.scalars(
            select(S.id).where(
                evaluated,
                or_(may_copy(evaluated), S.copy_of.is_not(None), S.id.in_(originals)),
            )
        )
    )


def choices(session: Session, *, task_id: str) -> dict[str, list[str]]:
    """The tools, models and variants of the task's runs with a standing (a board's filter
    values), from its tallies: an index range, not a grouping of the task."""
    return task_tallies.choices(task_tallies.counts(session, task_id=task_id))


def bins(
    session: Session,
    rule: KindRule,
    kept: Kept,
    *,
    include_held: bool,
    scale: tuple[float, float],
    n: int,
) -> list[int]:
    """How many ranked rows' values fall in each of ``n`` equal bins of ``scale`` (the last
    bin closed): read from the task's tallies for the unfiltered board on the kind's own
    bins, else counted in one aggregate."""
    if (
        unfiltered(kept)
        and not include_held
        and (tuple(scale), n) == (tuple(rule.scale), task_tallies.BINS)
    ):
        found = task_tallies.counts(session, task_id=kept.task_id)
        scope = task_tallies.scope_of(kept.traced_only)
        return [found[task_tallies.value_key(rule.kind, scope, f"bin {i}")] for i in range(n)]
    return aggregated_bins(session, rule, kept, include_held=include_held, scale=scale, n=n)


def aggregated_bins(
    session: Session,
    rule: KindRule,
    kept: Kept,
    *,
    include_held: bool,
    scale: tuple[float, float],
    n: int,
) -> list[int]:
    """`bins` counted over the kept rows in one aggregate (a filtered board's; the tallies'
    definition)."""
    value = value_of(rule)
    lo, hi = scale
    step = (hi - lo) / n
    where = kept.ranked(include_held=include_held)
    edges = [
        func.sum(case((and_(value >= lo + i * step, value < lo + (i + 1) * step), 1), else_=0))
        for i in range(n - 1)
    ]
    edges.append(func.sum(case((value >= lo + (n - 1) * step, 1), else_=0)))
    row = session.execute(
        select(*edges).select_from(R).join(S, S.id == R.submission_id).where(*where)
    ).one()
    return [int(count or 0) for count in row]


def stored_choices(session: Session) -> dict[str, dict[str, list[str]]]:
    """Every task's stored filter values (its board figures' ``choices``), by task id: one
    statement whatever the number of tasks."""
    rows = session.execute(select(BoardFiguresRow.task_id, BoardFiguresRow.data))
    return {task_id: data.get("choices") or {} for task_id, data in rows}


def stored_figures(session: Session, *, task_id: str) -> BoardFiguresRow | None:
    """The task's stored board figures (with the version they were computed at), if any."""
    return session.get(BoardFiguresRow, task_id)


def store_figures(
    session: Session, *, task_id: str, version: str, data: dict[str, Any], drawn_at: datetime
) -> None:
    """Keep the task's board figures, computed at ``version`` from what was read at
    ``drawn_at`` (replacing older ones): a ticket whose deadline passed after that moment is
    one the figures do not count yet, however long the drawing took."""
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    statement = insert(BoardFiguresRow).values(
        task_id=task_id, version=version, data=data, computed_at=drawn_at
    )
    session.execute(
        statement.on_conflict_do_update(
            index_elements=["task_id"],
            set_={"version": version, "data": data, "computed_at": drawn_at},
        )
    )
