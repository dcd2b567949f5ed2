"""The tallies of a task's board (`AgentTallyRow`, `JudgeTallyRow`): kept in proportion to the
change, read without grouping the task's runs.

A run is tallied while it has a standing (an evaluated run): under its agent, by its standing's
status (done / degraded), as counted (not held for review, not a copy: what the baseline counts)
or held, its usage figures widening its agent's ranges while it is counted; each judge model's
rubric scores of it under (model, rubric). The writers (`evalq.read.boards.projector`, alone):

- the merge takes a `Snapshot` of its runs before and after it writes them and adds the
  difference (`add`): one upsert per table, whatever the task's size; an agent whose counted
  run left (held, failed, a copy) has its ranges read again from its own runs (an index range
  of ``ix_submissions_task_agent``);
- the refresh, which decides copies and holds for the whole task, recounts the task's agent
  tallies set-wise (`recount`), as it stores the rest of the board;
- the migration (and a store filled without merges, as the benches' clones) counts the judged
  runs once (`recount_judged`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Table,
    and_,
    case,
    delete,
    func,
    literal,
    or_,
    select,
    tuple_,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from evalq.core.results import JudgeResult
from evalq.store.chunks import chunks
from evalq.store.models import (
    AgentTallyRow,
    JudgeTallyRow,
    StandingRow,
    SubmissionRow,
    TaskRow,
    TierResultRow,
)

S, R, A = SubmissionRow, StandingRow, AgentTallyRow
Agent = tuple[str, str]
FIGURES = {
    "time": S.execution_time,
    "cost": S.cost_usd,
    "tokens": S.total_tokens,
    "calls": S.tool_calls,
}
"""Each ranged usage figure's column; a time or cost of 0 is not measured."""
COUNTS = ("done", "degraded", "counted", "held")
_AGENTS: Table = AgentTallyRow.__table__  # type: ignore[assignment]
_JUDGED: Table = JudgeTallyRow.__table__  # type: ignore[assignment]


def measured(name: str) -> Any:
    """The figure's column as a range reads it (a time or cost of 0 is not measured)."""
    column = FIGURES[name]
    return func.nullif(column, 0) if name in ("time", "cost") else column


def counted() -> ColumnElement[bool]:
    """A run the baseline counts: not held for review, not a copy."""
    return and_(or_(S.review.is_(None), S.review != "flagged"), S.copy_of.is_(None))


def held() -> ColumnElement[bool]:
    """A run held for review (and not a copy, which is left out altogether)."""
    return and_(S.review == "flagged", S.copy_of.is_(None))


@dataclass(frozen=True)
class Tally:
    """What one run adds to its agent's tally (None: it has no standing, it adds nothing)."""

    task_id: str
    agent: Agent
    status: str | None
    review: str | None
    copy_of: str | None
    figures: Mapping[str, float | None]

    @property
    def tallied(self) -> bool:
        return self.status is not None

    @property
    def counted(self) -> bool:
        return self.tallied and self.review != "flagged" and self.copy_of is None

    @property
    def held(self) -> bool:
        return self.tallied and self.review == "flagged" and self.copy_of is None

    def counts(self) -> Counter[str]:
        found: Counter[str] = Counter()
        if self.status in ("done", "degraded"):
            found[self.status] += 1
        found["counted"] += self.counted
        found["held"] += self.held
        return found


Snapshot = dict[str, Tally]
"""Runs by id, as tallied at one moment."""


def snapshot(session: Session, submission_ids: Sequence[str]) -> Snapshot:
    """What each of the runs adds to the tallies now (one statement per
    `evalq.store.chunks.CHUNK` runs)."""
    found: Snapshot = {}
    for chunk in chunks(submission_ids):
        rows = session.execute(
            select(
                S.id,
                S.task_id,
                S.tool,
                S.model,
                R.status,
                S.review,
                S.copy_of,
                *(measured(name) for name in FIGURES),
            )
            .outerjoin(R, R.submission_id == S.id)
            .where(S.id.in_(chunk))
        )
        for sid, task_id, tool, model, status, review, copy_of, *figures in rows:
            found[sid] = Tally(
                task_id,
                (tool, model),
                status,
                review,
                copy_of,
                {
                    name: None if value is None else float(value)
                    for name, value in zip(FIGURES, figures, strict=True)
                },
            )
    return found


def add(
    session: Session,
    before: Snapshot,
    after: Snapshot,
    judged: Mapping[str, Sequence[tuple[str, str]]],
) -> set[Agent]:
    """Add to the tallies what changed between two snapshots of the same runs; ``judged``:
    the (model, rubric) pairs each run's judge scored, for the runs whose standing came or
    went. One upsert per table, and one range read per agent whose counted run left.

    Returns the agents whose standing moved: their first evaluated run on a task came, or
    their last one went, so the tasks they ran (`tasks_of`) changed."""
    deltas: dict[tuple[str, str, str], Counter[str]] = {}
    ranges: dict[tuple[str, str, str], dict[str, float | None]] = {}
    shrunk: set[tuple[str, str, str]] = set()
    judge: Counter[tuple[str, str, str]] = Counter()
    for sid, now in after.items():
        then = before.get(sid)
        old = then.counts() if then is not None else Counter[str]()
        key = (now.task_id, *now.agent)
        change = deltas.setdefault(key, Counter())
        change.update(now.counts())
        change.subtract(old)
        if then is not None and then.counted and not now.counted:
            shrunk.add(key)
        if now.counted:
            widened = ranges.setdefault(key, dict.fromkeys(FIGURES))
            for name, value in now.figures.items():
                widened[f"{name}_min"] = _least(widened.get(f"{name}_min"), value)
                widened[f"{name}_max"] = _greatest(widened.get(f"{name}_max"), value)
        was = then is not None and then.tallied
        if was != now.tallied:
            for model, rubric in judged.get(sid, ()):
                judge[(now.task_id, model, rubric)] += 1 if now.tallied else -1
    rows = [
        {"task_id": task_id, "tool": tool, "model": model}
        | {name: change.get(name, 0) for name in COUNTS}
        | {
            f"{name}_{end}": ranges.get((task_id, tool, model), {}).get(f"{name}_{end}")
            for name in FIGURES
            for end in ("min", "max")
        }
        for (task_id, tool, model), change in deltas.items()
        if any(change.values()) or (task_id, tool, model) in ranges
    ]
    _upsert_agents(session, rows)
    for key in sorted(shrunk):
        _reranged(session, *key)
    evaluated = {
        key: change["done"] + change["degraded"]
        for key, change in deltas.items()
        if change["done"] + change["degraded"]
    }
    moved = {
        (tool, model)
        for (task_id, tool, model), now in _evaluated_runs(session, list(evaluated)).items()
        if (now > 0) != (now - evaluated[(task_id, tool, model)] > 0)
    }
    _upsert_judged(
        session,
        [
            {"task_id": task_id, "model": model, "rubric": rubric, "runs": runs}
            for (task_id, model, rubric), runs in judge.items()
            if runs
        ],
    )
    return moved


def _evaluated_runs(
    session: Session, keys: Sequence[tuple[str, str, str]]
) -> dict[tuple[str, str, str], int]:
    """The evaluated runs (done or degraded) each (task, tool, model) now has in the tallies;
    0 for one without a row."""
    found = dict.fromkeys(keys, 0)
    for chunk in chunks(sorted(keys)):
        rows = session.execute(
            select(A.task_id, A.tool, A.model, A.done + A.degraded).where(
                tuple_(A.task_id, A.tool, A.model).in_(chunk)
            )
        )
        found.update(((task_id, tool, model), int(n)) for task_id, tool, model, n in rows)
    return found


def _least(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


def _greatest(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else max(a, b)


def _insert(session: Session) -> Any:
    dialect = session.get_bind().dialect.name
    return postgresql.insert if dialect == "postgresql" else sqlite.insert


def _sql_least(stored: Any, new: Any) -> Any:
    """The smaller of two nullable values, NULL only when both are (both databases)."""
    return case((stored.is_(None), new), (new.is_(None), stored), (new < stored, new), else_=stored)


def _sql_greatest(stored: Any, new: Any) -> Any:
    return case((stored.is_(None), new), (new.is_(None), stored), (new > stored, new), else_=stored)


def _upsert_agents(session: Session, rows: Sequence[Mapping[str, Any]]) -> None:
    if not rows:
        return
    statement = _insert(session)(_AGENTS)
    new, table = statement.excluded, _AGENTS.c
    changes: dict[str, Any] = {name: table[name] + new[name] for name in COUNTS}
    for name in FIGURES:
        low, high = f"{name}_min", f"{name}_max"
        changes[low] = _sql_least(table[low], new[low])
        changes[high] = _sql_greatest(table[high], new[high])
    session.execute(
        statement.on_conflict_do_update(index_elements=["task_id", "tool", "model"], set_=changes),
        list(rows),
    )


def _upsert_judged(session: Session, rows: Sequence[Mapping[str, Any]]) -> None:
    if not rows:
        return
    statement = _insert(session)(_JUDGED)
    session.execute(
        statement.on_conflict_do_update(
            index_elements=["task_id", "model", "rubric"],
            set_={"runs": _JUDGED.c.runs + statement.excluded.runs},
        ),
        list(rows),
    )


def _range_columns() -> list[Any]:
    columns = []
    for name in FIGURES:
        columns += [func.min(measured(name)), func.max(measured(name))]
    return columns


def _reranged(session: Session, task_id: str, tool: str, model: str) -> None:
    """Read one agent's ranges again from its counted runs (a counted run left them)."""
    bounds = session.execute(
        select(*_range_columns())
        .select_from(S)
        .join(R, R.submission_id == S.id)
        .where(S.task_id == task_id, S.tool == tool, S.model == model, counted())
    ).one()
    names = [f"{name}_{end}" for name in FIGURES for end in ("min", "max")]
    session.execute(
        update(A)
        .where(A.task_id == task_id, A.tool == tool, A.model == model)
        .values(dict(zip(names, bounds, strict=True)))
    )


def recount(session: Session, *, task_id: str) -> None:
    """Count the task's agent tallies again from its runs (the refresh's whole-task step,
    set-wise: one DELETE, one INSERT ... SELECT grouped by agent)."""
    session.execute(delete(A).where(A.task_id == task_id))
    one = literal(1)
    grouped = (
        select(
            S.task_id,
            S.tool,
            S.model,
            func.sum(case((R.status == "done", one), else_=0)),
            func.sum(case((R.status == "degraded", one), else_=0)),
            func.sum(case((counted(), one), else_=0)),
            func.sum(case((held(), one), else_=0)),
            *(
                func.min(case((counted(), measured(name))))
                if end == "min"
                else func.max(case((counted(), measured(name))))
                for name in FIGURES
                for end in ("min", "max")
            ),
        )
        .select_from(S)
        .join(R, R.submission_id == S.id)
        .where(S.task_id == task_id)
        .group_by(S.task_id, S.tool, S.model)
    )
    names = [
        "task_id",
        "tool",
        "model",
        *COUNTS,
        *(f"{name}_{end}" for name in FIGURES for end in ("min", "max")),
    ]
    session.execute(_AGENTS.insert().from_select(names, grouped))


def judge_pairs(metrics: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """The (model, rubric) pairs a stored judge tier scored (a panel's members each count as
    their own model), as `evalq.read.judge_agreement.judged_runs` reads them."""
    if not metrics or "scores" not in metrics:
        return []
    result = JudgeResult.model_validate(metrics)
    members = [(m.model, m.rubrics) for m in result.panel] or [(result.model, result.rubrics)]
    return sorted(
        {
            (model or "(unnamed)", r.rubric)
            for model, rubrics in members
            for r in rubrics
            if r.status == "ok" and r.score is not None
        }
    )


def judged_of(session: Session, submission_ids: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
    """The (model, rubric) pairs each run's judge tier scored (runs without one absent)."""
    found: dict[str, list[tuple[str, str]]] = {}
    for chunk in chunks(submission_ids):
        rows = session.execute(
            select(TierResultRow.submission_id, TierResultRow.metrics).where(
                TierResultRow.submission_id.in_(chunk),
                TierResultRow.tier == "judge",
                TierResultRow.status.in_(("ok", "failed")),
            )
        )
        for sid, metrics in rows:
            if pairs := judge_pairs(metrics):
                found[sid] = pairs
    return found


def recount_judged(session: Session, *, task_id: str) -> None:
    """Count the task's judged runs again (each run with a standing and a judge tier): for a
    store whose runs were not merged here (the migration, the benches' clones)."""
    session.execute(delete(JudgeTallyRow).where(JudgeTallyRow.task_id == task_id))
    rows = session.execute(
        select(TierResultRow.metrics)
        .join(R, R.submission_id == TierResultRow.submission_id)
        .where(
            R.task_id == task_id,
            TierResultRow.tier == "judge",
            TierResultRow.status.in_(("ok", "failed")),
        )
    )
    runs: Counter[tuple[str, str]] = Counter()
    for (metrics,) in rows:
        runs.update(judge_pairs(metrics))
    _upsert_judged(
        session,
        [
            {"task_id": task_id, "model": model, "rubric": rubric, "runs": n}
            for (model, rubric), n in runs.items()
        ],
    )


@dataclass(frozen=True)
class AgentFigures:
    """One agent's counted runs on a task: how many, and each figure's range (None: none
    measured)."""

    runs: int
    ranges: Mapping[str, tuple[float, float] | None]


def agent_figures(
    session: Session, *, task_ids: Sequence[str]
) -> dict[str, dict[Agent, AgentFigures]]:
    """Each task's agents with counted runs, and their ranges (one index range per task)."""
    found: dict[str, dict[Agent, AgentFigures]] = {t: {} for t in task_ids}
    for chunk in chunks(task_ids):
        rows = session.scalars(select(A).where(A.task_id.in_(chunk), A.counted > 0))
        for row in rows:
            ranges = {}
            for name in FIGURES:
                low, high = getattr(row, f"{name}_min"), getattr(row, f"{name}_max")
                ranges[name] = None if low is None else (float(low), float(high))
            found[row.task_id][(row.tool, row.model)] = AgentFigures(row.counted, ranges)
    return found


def counted_runs(session: Session, *, task_id: str) -> dict[Agent, int]:
    """How many runs the task's baseline counts of each agent (agents with none absent)."""
    rows = session.execute(
        select(A.tool, A.model, A.counted).where(A.task_id == task_id, A.counted > 0)
    )
    return {(tool, model): int(n) for tool, model, n in rows}


def standings_of(session: Session, agents: Iterable[Agent]) -> dict[Agent, int]:
    """How many tasks each of ``agents`` (agents with evaluated runs on the task being read)
    has evaluated runs on, that task included (its standing, at least 1: a task whose tallies
    were never counted, as a store filled without merges before its first refresh, still
    counts). One grouped index range of ``ix_agent_tallies_agent`` per
    `evalq.store.chunks.CHUNK` agents, as many rows as the agents ran tasks, never a read of
    their runs. The one reader of the fact: the robust and agent-weighted baselines
    (`evalq.store.baseline_sql`) and the board's flood notes (`evalq.read.flood`)."""
    wanted = sorted(set(agents))
    found = dict.fromkeys(wanted, 1)
    for chunk in chunks(wanted):
        rows = session.execute(
            select(A.tool, A.model, func.count())
            .where(tuple_(A.tool, A.model).in_(chunk), A.done + A.degraded > 0)
            .group_by(A.tool, A.model)
        )
        found.update(((tool, model), max(int(tasks), 1)) for tool, model, tasks in rows)
    return found


def tasks_of(session: Session, agents: Iterable[Agent]) -> dict[Agent, set[str]]:
    """The tasks on which each agent has a run with a standing (an index range per agent)."""
    wanted = sorted(set(agents))
    found: dict[Agent, set[str]] = {}
    tallied = A.done + A.degraded > 0
    for chunk in chunks(wanted):
        rows = session.execute(
            select(A.task_id, A.tool, A.model).where(tuple_(A.tool, A.model).in_(chunk), tallied)
        )
        for task_id, tool, model in rows:
            found.setdefault((tool, model), set()).add(task_id)
    return found


def arena_tasks_of(
    session: Session, agents: Iterable[Agent], *, besides: Iterable[str]
) -> list[str]:
    """The Arena tasks, other than ``besides``, on which any of ``agents`` has an evaluated
    run: those whose robust or agent-weighted baseline reads these agents' standings (how many
    tasks each ran: `standings_of`)."""
    tasks = set().union(*tasks_of(session, agents).values()) - set(besides)
    found: list[str] = []
    for chunk in chunks(sorted(tasks)):
        found += session.scalars(
            select(TaskRow.id).where(TaskRow.id.in_(chunk), TaskRow.kind == "arena")
        )
    return sorted(found)


def judged_pairs(session: Session, *, task_ids: Sequence[str]) -> dict[str, set[tuple[str, str]]]:
    """Each task's (rubric, model) pairs some judge scored at least one of its runs on."""
    found: dict[str, set[tuple[str, str]]] = {}
    for chunk in chunks(task_ids):
        rows = session.execute(
            select(JudgeTallyRow.task_id, JudgeTallyRow.rubric, JudgeTallyRow.model).where(
                JudgeTallyRow.task_id.in_(chunk),
                JudgeTallyRow.runs > 0,
            )
        )
        for task_id, rubric, model in rows:
            found.setdefault(task_id, set()).add((rubric, model))
    return found
