"""Which runs of a task count and which are held for review, decided in the database at every
baseline refresh: the same answer as `evalq.scoring.review` over the task's evaluated runs, read
without loading every run.

The pure functions stay the definition; SQL only narrows the runs they are given to the ones
that can be decided (a run of a repeated content, a run with enough outlier indicators, a run of
an output sent by more than one agent), so the cost of a refresh grows with what is held, not
with the size of the task (`bench/merge_scale.py`). `tests/integration/store/test_review_sql.py`
checks the two agree.

Copy marks are decided in proportion to what arrived: a run's mark depends only on the runs
submitted before it, so a refresh decides the runs submitted since the last one decided
(`_decide_since`, against the counted runs in reach of their usage), and the whole task only
when a run it had not decided arrives with an earlier time (`_mark_copies`;
`tests/integration/store/test_copies_since.py` checks both find what deciding the whole task
finds).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, bindparam, case, false, func, or_, select, update
from sqlalchemy.orm import Session

from evalq.core.profile import ArenaProfile
from evalq.core.results import EvaluationScores
from evalq.core.status import PENDING_STATUSES
from evalq.scoring.arena.run import ArenaRun
from evalq.scoring.injection import INSTRUCTIONS_JUDGED_AS_WRITTEN
from evalq.scoring.near_copy import sketch, sketch_bytes, stored_sketch
from evalq.scoring.plausible import IMPLAUSIBLY_FAST, implausibly_fast, speed_floor
from evalq.scoring.review import (
    COPIED_OUTPUT,
    INTEGRITY,
    NEAR_COPY_TOLERANCE,
    TRACE_TOLERANCE,
    USAGE_BELOW_TRACE,
    RunFacts,
    copied_outputs,
    duplicates,
    duplicates_after,
    held_indicators,
    near_in_usage_of,
    token_threshold,
)
from evalq.store.models import EvaluationRow, SubmissionRow, TaskRefreshRow
from evalq.store.queries import EVALUATED, FACT_COLUMNS, may_copy, refresh_row, run_facts
from evalq.store.ranks import Ranks


def settle_reviews(session: Session, *, task_id: str, profile: ArenaProfile) -> dict[str, str]:
    """Decide again, from every evaluated run of the task, which runs are copies (``copy_of``)
    and which are held for review (`evalq.scoring.review.review_flags`), so the outcome does not
    depend on the order the merges ran in; store each run's copy mark, flags and review state.
    Returns the copies (``{id: id of the run it copies}``).

    A run a person accepted stays accepted. A run flagged before and no longer an outlier is
    released (review back to None). Only the stored scores whose flags change are rewritten.
    """
    evaluated = and_(SubmissionRow.task_id == task_id, SubmissionRow.status.in_(EVALUATED))
    copies = _mark_copies(session, task_id, evaluated)
    counted = and_(evaluated, SubmissionRow.copy_of.is_(None))
    decided = _decide(session, counted, profile)
    reviewed = dict(
        session.execute(
            select(SubmissionRow.id, SubmissionRow.review).where(
                evaluated, SubmissionRow.review.is_not(None)
            )
        ).all()
    )
    flag = sorted(set(decided) - set(reviewed))
    release = sorted(i for i, state in reviewed.items() if state == "flagged" and i not in decided)
    for ids in _chunks(flag):
        session.execute(
            update(SubmissionRow).where(SubmissionRow.id.in_(ids)).values(review="flagged")
        )
    for ids in _chunks(release):
        session.execute(update(SubmissionRow).where(SubmissionRow.id.in_(ids)).values(review=None))
    # Stored flags can differ only where a run is, or was, reviewed.
    _store_flags(session, decided, sorted(set(decided) | set(reviewed)))
    return copies


def _chunks(ids: list[str], size: int = 2000) -> Iterator[list[str]]:
    """``ids`` in lists short enough for one ``IN (...)`` (SQLite caps a statement's bound
    parameters)."""
    for start in range(0, len(ids), size):
        yield ids[start : start + size]


def _mark_copies(session: Session, task_id: str, evaluated: ColumnElement[bool]) -> dict[str, str]:
    """Set ``copy_of`` on every copy or near-copy of an earlier run (and clear it where it no
    longer holds); returns the task's copies.

    A run's mark depends only on the runs submitted before it (`duplicates`). So when every run
    the last refresh decided is still there and no run it did not decide was submitted before
    its latest (`TaskRefreshRow`), only the runs submitted since are decided
    (`_decide_since`), against the counted runs in reach of their usage: in proportion to what
    arrived, not to the task. Otherwise (the first refresh, a late run) the whole task is
    decided again (`_decide_whole`)."""
    hashed = and_(evaluated, SubmissionRow.run_hash.is_not(None))
    progress = session.get(TaskRefreshRow, task_id)
    since, runs = (progress.copies_through, progress.copies_runs) if progress else (None, None)
    if since is not None and runs == session.scalar(
        select(func.count()).where(hashed, SubmissionRow.created_at <= since)
    ):
        copies = _decide_since(session, hashed, since)
    else:
        copies = _decide_whole(session, evaluated)
    through = _decided_through(session, task_id, hashed)
    if through is not None or progress is not None:
        progress = progress or refresh_row(session, task_id=task_id)
        progress.copies_through, progress.copies_runs = through, None
        if through is not None:
            before = SubmissionRow.created_at <= through
            progress.copies_runs = session.scalar(select(func.count()).where(hashed, before))
    session.flush()
    return copies


def _decided_through(
    session: Session, task_id: str, hashed: ColumnElement[bool]
) -> datetime | None:
    """The latest submission time up to which every run of the task that will be evaluated
    is: the newest evaluated run's, or, while runs submitted before it are still under way,
    the latest before the earliest of those (the runs after it are decided again next time)."""
    s = SubmissionRow
    newest = session.scalar(select(func.max(s.created_at)).where(hashed))
    waiting = session.scalar(
        select(func.min(s.created_at)).where(s.task_id == task_id, s.status.in_(PENDING_STATUSES))
    )
    if newest is None or waiting is None or waiting > newest:
        return newest
    return session.scalar(select(func.max(s.created_at)).where(hashed, s.created_at < waiting))


def _decide_whole(session: Session, evaluated: ColumnElement[bool]) -> dict[str, str]:
    """Every run's copy mark decided from the task's runs: only the runs of a content, or of
    one agent's shape, sent more than once are read, and the sketches of the runs whose usage
    is near another's."""
    facts = {f.run.submission_id: f for f in _facts(session, may_copy(evaluated))}
    facts |= {f.run.submission_id: f for f in _sketched(session, evaluated)}
    copies = duplicates(list(facts.values()))
    marked = _marks(session, evaluated)
    _write_marks(session, {sid: None for sid in set(marked) - set(copies)})
    _write_marks(session, {sid: o for sid, o in copies.items() if marked.get(sid) != o})
    return copies


def _decide_since(session: Session, hashed: ColumnElement[bool], since: datetime) -> dict[str, str]:
    """The copy marks of the runs submitted after ``since`` (`duplicates_after`), decided
    against the counted runs before them whose usage is within reach of one of theirs
    (`_in_reach`) and the earliest run of each of their contents; the marks of the runs before
    stay as they are."""
    s = SubmissionRow
    later = _with_sketches(session, and_(hashed, s.created_at > since))
    marked = _marks(session, hashed)
    if not later:
        return marked
    counted_before = and_(hashed, s.created_at <= since, s.copy_of.is_(None))
    earlier = {
        f.run.submission_id: f
        for part in range(0, len(later), RUNS_PER_STATEMENT)
        for f in _with_sketches(
            session,
            and_(
                counted_before,
                or_(*(_in_reach(f.run) for f in later[part : part + RUNS_PER_STATEMENT])),
            ),
        )
    }
    hashes = sorted({str(f.run_hash) for f in later})
    firsts: dict[str, tuple[datetime, str]] = {}
    for ids in _chunks(hashes):
        for run_hash, created_at, sid in session.execute(
            select(s.run_hash, s.created_at, s.id).where(
                hashed, s.created_at <= since, s.run_hash.in_(ids)
            )
        ):
            key = str(run_hash)
            if key not in firsts or (created_at, sid) < firsts[key]:
                firsts[key] = (created_at, sid)
    found = duplicates_after(
        list(earlier.values()), {h: sid for h, (_, sid) in firsts.items()}, later
    )
    mine = {f.run.submission_id for f in later}
    _write_marks(session, {sid: None for sid in mine & set(marked) if sid not in found})
    _write_marks(session, {sid: o for sid, o in found.items() if marked.get(sid) != o})
    return {sid: o for sid, o in marked.items() if sid not in mine} | found


RUNS_PER_STATEMENT = 100
"""Runs whose reach one statement of `_decide_since` reads (`_in_reach` each)."""


def _in_reach(run: ArenaRun) -> ColumnElement[bool]:
    """The runs whose tokens, tool calls, iterations and time are each within
    `NEAR_COPY_TOLERANCE` of ``run``'s (`same_usage` without the cost), a little wider: a
    range of the task's rank index on total tokens, the rest checked on its rows."""
    s = SubmissionRow

    def near(column: Any, value: float) -> ColumnElement[bool]:
        low = value * (1 - NEAR_COPY_TOLERANCE) * (1 - 1e-9)
        high = value / (1 - NEAR_COPY_TOLERANCE) * (1 + 1e-9)
        return and_(column >= low, column <= high)

    time = s.execution_time
    timed = (
        or_(time.is_(None), time == 0)
        if run.measured_time is None
        else near(time, run.measured_time)
    )
    return and_(
        near(s.total_tokens, run.total_tokens),
        near(s.tool_calls, run.tool_calls),
        near(s.iterations, run.iterations),
        timed,
    )


def _marks(session: Session, where: ColumnElement[bool]) -> dict[str, str]:
    """The stored copy marks of the runs ``where`` selects (a copy has a run hash: the
    condition lets the run-hash index answer alone)."""
    return {
        sid: str(original)
        for sid, original in session.execute(
            select(SubmissionRow.id, SubmissionRow.copy_of).where(
                where, SubmissionRow.run_hash.is_not(None), SubmissionRow.copy_of.is_not(None)
            )
        )
    }


def _write_marks(session: Session, marks: dict[str, str | None]) -> None:
    for sid, original in sorted(marks.items()):
        session.execute(
            update(SubmissionRow).where(SubmissionRow.id == sid).values(copy_of=original)
        )


def _decide(
    session: Session, counted: ColumnElement[bool], profile: ArenaProfile
) -> dict[str, tuple[str, ...]]:
    """`evalq.scoring.review.review_flags` over the counted runs (copies left out)."""
    count = int(session.scalar(select(func.count()).where(counted)) or 0)
    if not count:
        return {}
    median = Ranks(session, SubmissionRow.total_tokens, counted, count).median()
    threshold = token_threshold(median, profile)
    time = SubmissionRow.execution_time
    indicators = (
        case((SubmissionRow.total_tokens < threshold, 1), else_=0)
        + case(
            (and_(time.is_not(None), time != 0, time < profile.outlier_fast_seconds), 1),
            else_=0,
        )
        + case((SubmissionRow.tool_calls == 1, 1), else_=0)
    )
    # a reported time under its trace's span, or fewer tool calls than its steps (the pure
    # rule, `RunFacts.below_trace`, decides among these)
    below_trace = or_(
        and_(
            SubmissionRow.trace_seconds.is_not(None),
            time.is_not(None),
            time != 0,
            time < SubmissionRow.trace_seconds * (1 - TRACE_TOLERANCE),
        ),
        and_(
            SubmissionRow.trace_steps.is_not(None),
            SubmissionRow.tool_calls < SubmissionRow.trace_steps,
        ),
    )
    broke = or_(SubmissionRow.integrity_hits > 0, SubmissionRow.judged_as_written > 0)
    # each agent's median measured time (one row per agent); a run under the highest floor
    # any agent gets is read, and the pure rule decides among them
    from evalq.store.baseline_sql import agent_medians  # it imports this module

    times = agent_medians(session, time, and_(counted, time.is_not(None), time != 0))
    floors = [f for f in (speed_floor(times, agent) for agent in times) if f is not None]
    fast = and_(time.is_not(None), time != 0, time < max(floors)) if floors else false()
    outliers = _facts(
        session,
        and_(
            counted,
            or_(indicators >= profile.outlier_min_flags, below_trace, broke, fast),
        ),
    )
    shared = (
        select(SubmissionRow.output_hash)
        .where(counted, SubmissionRow.output_hash.is_not(None))
        .group_by(SubmissionRow.output_hash)
        .having(func.count(func.distinct(SubmissionRow.tool + "\x1f" + SubmissionRow.model)) > 1)
    )
    copied = copied_outputs(_facts(session, and_(counted, SubmissionRow.output_hash.in_(shared))))
    decided: dict[str, tuple[str, ...]] = {}
    for facts in outliers:
        held = held_indicators(facts, threshold, profile)
        if facts.below_trace:
            held = (*held, USAGE_BELOW_TRACE)
        if facts.integrity_hits:
            held = (*held, INTEGRITY)
        if facts.judged_as_written:
            held = (*held, INSTRUCTIONS_JUDGED_AS_WRITTEN)
        if implausibly_fast(facts.run.measured_time, (facts.run.tool, facts.run.model), times):
            held = (*held, IMPLAUSIBLY_FAST)
        if held:
            decided[facts.run.submission_id] = held
    for sid in copied:
        decided[sid] = (*decided.get(sid, ()), COPIED_OUTPUT)
    return decided


def _sketched(session: Session, evaluated: ColumnElement[bool]) -> list[RunFacts]:
    """The runs whose every usage figure is within `NEAR_COPY_TOLERANCE` of another run's (the
    only ones a similarity near-copy can be found among), each with its content's sketch. The
    usage columns of the task's runs are read and compared in windows of total tokens
    (`near_in_usage_of`); only the sketches of the runs found are read (`_with_sketches`)."""
    s = SubmissionRow
    usage = select(s.id, s.total_tokens, s.tool_calls, s.iterations, s.execution_time)
    rows = session.execute(usage.where(evaluated, s.run_hash.is_not(None))).all()
    wanted = near_in_usage_of(
        [(r.id, r.total_tokens, r.tool_calls, r.iterations, r[4]) for r in rows]
    )
    return [
        found
        for ids in _chunks(sorted(wanted))
        for found in _with_sketches(session, SubmissionRow.id.in_(ids))
    ]


def _with_sketches(session: Session, where: ColumnElement[bool]) -> list[RunFacts]:
    """The facts of the runs ``where`` selects, each with its content's sketch as the merge
    stored it (`store_sketches`), or sketched from its payload when it stored none (runs
    merged before it did)."""
    found: list[RunFacts] = []
    missing: list[str] = []
    for row in session.execute(select(*FACT_COLUMNS, SubmissionRow.sketch).where(where)):
        if row.sketch is None:
            missing.append(row.id)
        else:
            found.append(replace(run_facts(row), sketch=stored_sketch(row.sketch)))
    for ids in _chunks(missing):
        for row, payload in session.execute(
            select(SubmissionRow, SubmissionRow.payload).where(SubmissionRow.id.in_(ids))
        ):
            found.append(replace(run_facts(row), sketch=sketch(payload or {})))
    return found


def store_sketches(session: Session, runs: Sequence[SubmissionRow]) -> None:
    """Store each run's content sketch (`evalq.scoring.near_copy.sketch` of its payload,
    `sketch_bytes`) for the refresh's near-copy search to read: one statement, whatever the
    task's size; called by the projector at merge, the sketch's one writer."""
    rows = [
        {"sid": run.id, "stored": stored}
        for run in runs
        if (found := sketch(run.payload or {})) is not None
        and (stored := sketch_bytes(found)) is not None
    ]
    if rows:
        table: Any = SubmissionRow.__table__
        session.execute(
            update(table).where(table.c.id == bindparam("sid")).values(sketch=bindparam("stored")),
            rows,
        )


def _facts(session: Session, where: ColumnElement[bool]) -> list[RunFacts]:
    return [run_facts(row) for row in session.execute(select(*FACT_COLUMNS).where(where))]


def _store_flags(session: Session, decided: dict[str, tuple[str, ...]], touched: list[str]) -> None:
    """Rewrite the stored review flags of the ``touched`` runs whose flags changed; the flags
    are compared without decoding the rest of the stored scores."""
    stored_flags = EvaluationRow.scores["review"]["flags"]
    changed = [
        sid
        for ids in _chunks(touched)
        for sid, flags in session.execute(
            select(EvaluationRow.submission_id, stored_flags).where(
                EvaluationRow.submission_id.in_(ids)
            )
        )
        if tuple(flags or ()) != decided.get(sid, ())
    ]
    for evaluation in (
        evaluation
        for ids in _chunks(changed)
        for evaluation in session.scalars(
            select(EvaluationRow).where(EvaluationRow.submission_id.in_(ids))
        )
    ):
        scores = EvaluationScores.model_validate(evaluation.scores)
        review = scores.review.model_copy(
            update={"flags": decided.get(evaluation.submission_id, ())}
        )
        evaluation.scores = scores.model_copy(update={"review": review}).model_dump(mode="json")
