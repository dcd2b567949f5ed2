"""A task's Arena baseline from order statistics read in the database, not from every row.

`sql_baseline` returns exactly what `evalq.scoring.arena.compute_baseline` returns for the task's
baseline runs (status done / degraded, not flagged for review, not a copy; under
``arena.usage = "traced"`` only the runs whose usage was collected), but reads O(1)
values per figure: three counts, the extremes from either end of an index, and each median /
quartile as the one or two rows at its rank (``ORDER BY column LIMIT 2 OFFSET rank``). The
per-column indexes of migrations 0003, 0004 and 0008 order these reads, so nothing is sorted (an
OFFSET still steps over ``rank`` index entries). The arithmetic on those values is the arithmetic
of `statistics.median` and `statistics.quantiles(n=4, method="exclusive")`, so the results are
equal, not merely close.

A run flagged for review (`evalq.store.queries.flag_for_review`) is left out of every one of
these reads until a person accepts it, and a copy of an earlier run (``copy_of``, set by
`evalq.store.review_sql.settle_reviews`) always; ``review`` and ``copy_of`` are the last columns
of those indexes (0004, 0008), so the reads stay index-only.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, and_, func, or_, select
from sqlalchemy.orm import InstrumentedAttribute, Session

from evalq.core.profile import ArenaProfile, profile_named
from evalq.core.settings import Settings
from evalq.scoring.arena import Baseline, compute_baseline
from evalq.scoring.arena.baseline import (
    RANGED,
    Agent,
    agent_values,
    baseline_from_values,
    robust_values,
)
from evalq.scoring.arena.robust import band, centre_of, crowd_of
from evalq.store import queries, tallies, task_kinds
from evalq.store.models import SubmissionRow
from evalq.store.queries import EVALUATED
from evalq.store.ranks import Ranks
from evalq.store.review_sql import settle_reviews

_Column = InstrumentedAttribute[Any]


def sql_baseline(
    session: Session, *, task_id: str, profile: ArenaProfile, last_updated: str | None = None
) -> Baseline:
    """The Arena baseline of ``task_id``'s evaluated submissions, computed in the database.

    Submissions flagged for review are left out; accepted ones (and never flagged ones) count.

    Args:
        session: an open session.
        task_id: the task.
        profile: the Arena profile section (``min_submissions``, ``default_baseline``).
        last_updated: timestamp to record, as in `compute_baseline`.

    Returns:
        The same `Baseline` as ``compute_baseline(runs, profile)`` over those submissions.
    """
    # Every read below narrows this one condition, so each applies the review exclusion.
    evaluated = and_(
        SubmissionRow.task_id == task_id,
        SubmissionRow.status.in_(EVALUATED),
        # NULL-safe: a never-reviewed run (NULL) counts, as an accepted one does.
        SubmissionRow.review.is_distinct_from("flagged"),
        # A copy of a run counts once: as the earliest run with its content (marked by
        # `settle_reviews`, which every refresh runs first).
        SubmissionRow.copy_of.is_(None),
    )
    if profile.usage == "traced":  # the runs not ranked under this profile scale no one's score
        evaluated = and_(evaluated, SubmissionRow.trace_provenance == "collected")
    time, cost = SubmissionRow.execution_time, SubmissionRow.cost_usd
    timed = and_(evaluated, _measured(time))
    costed = and_(evaluated, _measured(cost))
    # Three counts over the same runs.
    count, times, costs = (
        int(session.scalar(select(func.count()).where(where)) or 0)
        for where in (evaluated, timed, costed)
    )
    if count < profile.min_submissions:
        default = compute_baseline([], profile, last_updated=last_updated)
        return default.model_copy(update={"submission_count": count})
    if profile.baseline != "runs":
        return _agent_baseline(session, evaluated, count, profile, last_updated)
    tokens = Ranks(session, SubmissionRow.total_tokens, evaluated, count)
    calls = Ranks(session, SubmissionRow.tool_calls, evaluated, count)
    iterations = Ranks(session, SubmissionRow.iterations, evaluated, count)
    q25, q75 = tokens.quartiles()
    data = compute_baseline([], profile).model_dump()  # the defaults of what no run measured
    data |= {
        "submission_count": count,
        "median_tokens": tokens.median(),
        "min_tokens": tokens.at(0),
        "max_tokens": tokens.last(),
        "q25_tokens": q25,
        "q75_tokens": q75,
        "median_tool_calls": calls.median(),
        "min_tool_calls": calls.at(0),
        "max_tool_calls": calls.last(),
        "median_iterations": iterations.median(),
        "is_default": False,
        "time_is_default": times == 0,
        "cost_is_default": costs == 0,
        "last_updated": last_updated,
    }
    for name, column, where, measured in (
        ("execution_time", time, timed, times),
        ("cost", cost, costed, costs),
    ):
        if measured:
            ranks = Ranks(session, column, where, measured)
            data |= {
                f"median_{name}": ranks.median(),
                f"min_{name}": ranks.at(0),
                f"max_{name}": ranks.last(),
            }
    return Baseline(**data)


def _agent_baseline(
    session: Session,
    evaluated: ColumnElement[bool],
    count: int,
    profile: ArenaProfile,
    last_updated: str | None,
) -> Baseline:
    """`compute_baseline` with ``profile.baseline`` "agents" or "robust": each figure's
    per-agent medians computed in the database (`agent_medians`, one row per agent), the agents
    seen on no other task or the tasks each agent ran (`new_agents`, `tallies.standings_of`),
    and the baseline read over those values (`agent_values`; or `robust_values`, with each
    range the runs' extremes within its band, `fenced_range`)."""
    s = SubmissionRow
    figures = {
        "tokens": (s.total_tokens, evaluated),
        "calls": (s.tool_calls, evaluated),
        "iterations": (s.iterations, evaluated),
        "times": (s.execution_time, and_(evaluated, _measured(s.execution_time))),
        "costs": (s.cost_usd, and_(evaluated, _measured(s.cost_usd))),
    }
    medians = {name: agent_medians(session, c, where) for name, (c, where) in figures.items()}
    agents = set(medians["tokens"])  # every counted run has tokens: every agent
    if profile.baseline != "robust":
        new = new_agents(session, agents=agents) if len(agents) > 1 else set()
        values = {name: agent_values(found, new) for name, found in medians.items()}
        return baseline_from_values(
            count, **values, profile=profile, last_updated=last_updated, ranges=None
        )
    crowd = crowd_of(tallies.standings_of(session, agents))
    values = {name: robust_values(found, crowd) for name, found in medians.items()}
    ranges = {}
    for name in RANGED:
        if values[name]:
            column, where = figures[name]
            if crowd and any(agent not in crowd for agent in medians[name]):
                ranges[name] = _fenced_without(session, column, where, values[name], crowd)
            else:
                ranges[name] = fenced_range(session, column, where, values[name])
    return baseline_from_values(
        count, **values, profile=profile, last_updated=last_updated, ranges=ranges
    )


def _fenced_without(
    session: Session,
    column: _Column,
    where: ColumnElement[bool],
    values: list[float],
    crowd: set[Agent],
) -> tuple[float, float]:
    """`fenced_range` over the runs of the agents outside ``crowd``
    (`evalq.scoring.arena.baseline.ranged_runs`): each agent's lowest and highest value within
    the band (one grouped statement, its parameters the band's two ends however large the
    crowd), the crowd's left out here."""
    centre = centre_of(values)
    low, high = band(centre)
    s = SubmissionRow
    ends = [
        (float(lowest), float(highest))
        for tool, model, lowest, highest in session.execute(
            select(s.tool, s.model, func.min(column), func.max(column))
            .where(where, column >= low, column <= high)
            .group_by(s.tool, s.model)
        )
        if (tool, model) not in crowd
    ]
    if not ends:
        return centre, centre
    return min(e[0] for e in ends), max(e[1] for e in ends)


def fenced_range(
    session: Session, column: _Column, where: ColumnElement[bool], values: list[float]
) -> tuple[float, float]:
    """`evalq.scoring.arena.robust.fenced_range` in the database: the lowest and highest of
    ``column`` over the rows matching ``where`` within the band around the agents' ``values``
    (two ends of one index range)."""
    centre = centre_of(values)
    low, high = band(centre)
    found = session.execute(
        select(func.min(column), func.max(column)).where(where, column >= low, column <= high)
    ).one()
    if found[0] is None:
        return centre, centre
    return float(found[0]), float(found[1])


def agent_medians(
    session: Session, column: _Column, where: ColumnElement[bool]
) -> dict[Agent, float]:
    """``statistics.median`` of ``column`` over each agent's (tool, model) rows matching
    ``where``, computed in the database: each row's rank within its agent (a window function),
    then the mean of the one or two middle ranks. One row per agent comes back, not one per run."""
    s = SubmissionRow
    agent = (s.tool, s.model)
    ranked = (
        select(
            s.tool,
            s.model,
            column.label("value"),
            func.row_number().over(partition_by=agent, order_by=column).label("rank"),
            func.count().over(partition_by=agent).label("size"),
        )
        .where(where)
        .subquery()
    )
    # 1-based middle ranks: (size + 1) // 2 and (size + 2) // 2, one rank when size is odd.
    middle = or_(
        ranked.c.rank == (ranked.c.size + 1) // 2, ranked.c.rank == (ranked.c.size + 2) // 2
    )
    rows = session.execute(
        select(ranked.c.tool, ranked.c.model, func.min(ranked.c.value), func.max(ranked.c.value))
        .where(middle)
        .group_by(ranked.c.tool, ranked.c.model)
    ).all()
    # The two middle values' mean as statistics.median computes it, (low + high) / 2.
    return {(tool, model): (float(low) + float(high)) / 2 for tool, model, low, high in rows}


def new_agents(session: Session, *, agents: set[Agent]) -> set[Agent]:
    """The task's ``agents`` with no evaluated run on another task (as `evalq.read.flood` counts
    them): those whose standing (`evalq.store.tallies.standings_of`) is 1."""
    return {agent for agent, tasks in tallies.standings_of(session, agents).items() if tasks == 1}


def _measured(column: _Column) -> ColumnElement[bool]:
    """`ArenaRun.measured_time` / ``measured_cost``: 0 and NULL both mean not measured."""
    return and_(column.is_not(None), column != 0)


def refresh_task_baseline(
    session: Session, *, task_id: str, settings: Settings | None = None
) -> int:
    """Settle the task's reviews (`evalq.store.review_sql.settle_reviews`), then compute its
    baseline again with its profile and store it (`store_baseline`): what a refresh and an
    accepted review both do; the task's stored kind is settled from its runs on the way
    (`task_kinds.settle`). Returns the current version."""
    task = queries.get_task(session, task_id=task_id)
    profile = profile_named(task.profile, settings)
    task_kinds.settle(session, task)
    # Who is held for review, decided from the whole set (not the order merges ran in),
    # before the baseline that leaves the held runs and the duplicates out.
    settle_reviews(session, task_id=task_id, profile=profile.arena)
    return store_baseline(session, task_id=task_id, profile=profile.arena)


def store_baseline(session: Session, *, task_id: str, profile: ArenaProfile) -> int:
    """Compute the task's baseline in the database; store it as a new version unless it equals
    the newest. Returns the current version.

    Raises:
        sqlalchemy.exc.IntegrityError: a concurrent refresh stored this version number first
            (the caller reads again in a new transaction).
    """
    baseline = sql_baseline(session, task_id=task_id, profile=profile)
    current = queries.current_baseline(session, task_id=task_id)
    data = baseline.model_dump()
    if current is not None and current.data == data:
        return current.version
    return queries.add_baseline(
        session, task_id=task_id, data=data, submission_count=baseline.submission_count
    )
