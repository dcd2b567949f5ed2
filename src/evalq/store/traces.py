"""Traces whose spans arrive over many requests: stored span by span, claimed once when over.

The database holds every span before ``POST /v1/traces`` answers, so a restart of the API or of
a worker mid-trace loses nothing. A trace becomes one submission exactly once: the sweep claims
it with a conditional UPDATE (``status`` open -> finalising; only one claimer sees a row
changed), and ``traces.submission_id`` is unique. docs/traces.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import (
    ColumnElement,
    String,
    Table,
    bindparam,
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

from evalq.core.schemas import MAX_TRACE_EDGES
from evalq.core.trace_rules import TraceRule, TraceRuleOf
from evalq.store.models import TraceRow, TraceRuleRow, TraceSpanRow, utcnow

if TYPE_CHECKING:  # protobuf is loaded only where spans are read
    from evalq.traces.spans_in import IncomingSpan


@dataclass(frozen=True)
class Stored:
    """What one request did to one trace: spans stored (new), and the reasons for refused ones."""

    stored: int
    late: int
    rejected: list[str]


def store_spans(
    session: Session,
    *,
    trace_id: str,
    spans: list[IncomingSpan],
    defaults: Mapping[str, str],
    max_spans: int,
    owner: str | None = None,
) -> Stored:
    """Store the new spans of one trace (`store_request` for one trace)."""
    found = store_request(
        session, traces={trace_id: spans}, defaults=defaults, max_spans=max_spans, owner=owner
    )
    return found[trace_id]


def store_request(
    session: Session,
    *,
    traces: Mapping[str, list[IncomingSpan]],
    defaults: Mapping[str, str],
    max_spans: int,
    owner: str | None = None,
    rules: Sequence[TraceRule] | None = None,
    max_open: int | None = None,
) -> dict[str, Stored]:
    """Store the new spans of each trace of one request (a span already stored is not stored
    again), in a fixed number of statements whatever the number of traces.

    With the tasks' ``rules``, each trace is decided as it arrives: one whose spans so far
    neither name a task (nor does the request, ``defaults``) nor meet a filter of a rule that
    samples it (`evalq.traces.rules.may_take`) is kept ``untaken`` from its first spans, so
    the sweep never reads it; a later span that may be taken opens it again. Without
    ``rules``, every trace waits for the sweep to decide.

    A trace belongs to the API key (``owner``, its name) whose request opened it: spans of it
    from another key are refused with the reason, and that request changes nothing of the
    trace (not its defaults, nor when it last had a span). A trace opened without a key (``evalq
    import otlp``) or before owners were stored is taken by the first key that sends to it; a
    request without a key (the operator's own import) may add to any trace.

    The traces' rows are written first, in trace id order, which locks them until the commit:
    concurrent requests for one trace take turns (and never deadlock), so the counts and the
    bound are exact. Spans of a trace already claimed are stored as late. A trace that can
    never become a run (it would pass ``max_spans``, or hold more tool calls than a run's trace
    has edges, ``MAX_TRACE_EDGES + 1``) is refused whole: it is marked ``refused`` with the
    reason, its stored spans are dropped, and every later span of it is refused with the same
    reason (never evaluated on part of its spans).

    With ``max_open``, a request that would take its ``owner`` past that many open traces is
    refused whole (`OpenTracesCapped`) before anything is written.
    """
    if not traces:
        return {}
    now = utcnow()
    ids = sorted(traces)
    if owner is not None and max_open is not None:
        _within_open_cap(session, owner=owner, trace_ids=ids, most=max_open)
    rows = _upsert_traces(session, trace_ids=ids, defaults=defaults, now=now, owner=owner)
    # A trace with no span counted has none stored: only the others are looked up.
    counted = [t for t in ids if rows[t].span_count or rows[t].late_spans]
    pairs = [(trace_id, span.span_id) for trace_id in counted for span in traces[trace_id]]
    known: set[tuple[str, str]] = set()
    for first in range(0, len(pairs), 500):  # bound the statement's parameters
        chunk = pairs[first : first + 500]
        found = session.execute(
            select(TraceSpanRow.trace_id, TraceSpanRow.span_id).where(
                tuple_(TraceSpanRow.trace_id, TraceSpanRow.span_id).in_(chunk)
            )
        )
        known |= {(trace_id, span_id) for trace_id, span_id in found}
    inserts: list[dict[str, Any]] = []
    changed: list[dict[str, Any]] = []
    answer: dict[str, Stored] = {}
    for trace_id in ids:
        row = rows[trace_id]
        before = _values(row)
        new = [s for s in traces[trace_id] if (trace_id, s.span_id) not in known]
        if owner is not None and row.owner not in (None, owner):
            answer[trace_id] = Stored(0, 0, [foreign(trace_id)] * len(traces[trace_id]))
            continue
        if owner is not None and row.owner is None:
            row.owner = owner
        answer[trace_id] = _take(session, row, new, max_spans=max_spans)
        if rules is not None and answer[trace_id].stored:
            from evalq.traces.rules import may_take  # with the spans: protobuf is loaded

            named = "task_id" in defaults
            _decide(row, new, taken=named or any(may_take(rules, span) for span in new))
        if answer[trace_id].stored or answer[trace_id].late:
            late = bool(answer[trace_id].late)
            inserts += [_span_row(trace_id, span, late=late, now=now) for span in new]
        after = _values(row)
        if after != before:
            changed.append({"key": trace_id} | after)
    # Core statements, each one executemany: the ORM's bulk paths cost more per row than the
    # database does here.
    if changed:
        by_key = update(TRACES).where(TRACES.c.trace_id == bindparam("key"))
        session.execute(by_key, changed)
    if inserts:
        _insert_spans(session, inserts)
    return answer


def _insert_spans(session: Session, rows: list[dict[str, Any]]) -> None:
    """Insert the span rows, skipping any already stored. On PostgreSQL each column goes as one
    array (``unnest``): one statement, where an executemany costs the driver per row."""
    if session.get_bind().dialect.name != "postgresql":
        session.execute(sqlite.insert(SPANS).on_conflict_do_nothing(), rows)
        return
    names = list(rows[0])
    arrays = [
        bindparam(name, [row[name] for row in rows], type_=postgresql.ARRAY(SPANS.c[name].type))
        for name in names
    ]
    source = select(func.unnest(*arrays).table_valued(*names).render_derived())
    statement = postgresql.insert(SPANS).from_select(names, source)
    session.execute(statement.on_conflict_do_nothing())


def _values(row: _Arriving) -> dict[str, Any]:
    return dict(vars(row))  # shallow: a changed ``error`` is a new dict, never changed in place


@dataclass
class _Arriving:
    """A trace's row as one request finds it (locked) and changes it; written back if changed."""

    trace_id: str
    status: str
    error: dict[str, Any] | None
    span_count: int
    late_spans: int
    tool_spans: int
    start_ns: int | None
    end_ns: int | None
    has_root: bool
    end_marked: bool
    service_name: str | None
    owner: str | None
    claimed_at: datetime | None


ARRIVING_NAMES = tuple(f.name for f in fields(_Arriving))
TRACES = cast(Table, TraceRow.__table__)
SPANS = cast(Table, TraceSpanRow.__table__)
ARRIVING_COLUMNS = tuple(TRACES.c[name] for name in ARRIVING_NAMES)


class OpenTracesCapped(Exception):
    """A request would take its API key past EVALQ_TRACE_MAX_OPEN_PER_KEY open traces."""


def _within_open_cap(session: Session, *, owner: str, trace_ids: list[str], most: int) -> None:
    """`OpenTracesCapped` when the traces this request opens would take ``owner`` past
    ``most`` open traces (spans of traces it already holds are always taken)."""
    held = int(
        session.scalar(
            select(func.count()).where(TraceRow.owner == owner, TraceRow.status == "open")
        )
        or 0
    )
    if held + len(trace_ids) <= most:  # the usual case: no need to tell new traces apart
        return
    present: set[str] = set()
    for first in range(0, len(trace_ids), 500):
        chunk = trace_ids[first : first + 500]
        present |= set(
            session.scalars(select(TraceRow.trace_id).where(TraceRow.trace_id.in_(chunk)))
        )
    opened = len(trace_ids) - len(present)
    if opened and held + opened > most:
        raise OpenTracesCapped(
            f"API key {owner!r} holds {held:,} open traces and this request would open "
            f"{opened:,} more; at most {most:,} per key (EVALQ_TRACE_MAX_OPEN_PER_KEY): send "
            "again once its runs are over and finalised"
        )


def foreign(trace_id: str) -> str:
    """Why a span from a key other than the trace's owner is refused."""
    return (
        f"trace {trace_id}: opened by another API key; only the key that sent its first spans "
        "adds spans to it"
    )


def _take(session: Session, row: _Arriving, new: list[IncomingSpan], *, max_spans: int) -> Stored:
    """Count ``new`` spans on the trace's row, or refuse them (and the trace) over the bound."""
    if row.status == "refused":
        reason = str((row.error or {}).get("message", "the trace was refused"))
        return Stored(0, 0, [reason] * len(new))
    if not new:
        return Stored(0, 0, [])
    late = row.status != "open" and not untaken_at_arrival(row)
    tools = row.tool_spans + sum(span.tool for span in new)
    message = None
    if row.span_count + row.late_spans + len(new) > max_spans:
        message = (
            f"trace {row.trace_id}: holds more than {max_spans} spans (EVALQ_TRACE_MAX_SPANS); "
            "the trace is refused whole, and so are its later spans"
        )
    elif not late and tools > MAX_TRACE_EDGES + 1:
        message = (
            f"trace {row.trace_id}: holds {tools} tool calls, so at least {tools - 1} edges; a "
            f"run's trace has at most {MAX_TRACE_EDGES} (transitions + messages), so it can "
            "never be evaluated: the trace is refused whole, and so are its later spans"
        )
    if message is not None:
        if not late:
            session.execute(delete(TraceSpanRow).where(TraceSpanRow.trace_id == row.trace_id))
            row.status, row.error, row.span_count = "refused", {"message": message}, 0
        return Stored(0, 0, [message] * len(new))
    if row.service_name is None:
        row.service_name = next((s.service_name[:200] for s in new if s.service_name), None)
    if late:
        row.late_spans += len(new)
        return Stored(0, len(new), [])
    row.span_count += len(new)
    row.tool_spans = tools
    starts = [s.start_ns for s in new] + ([row.start_ns] if row.start_ns is not None else [])
    ends = [s.end_ns for s in new] + ([row.end_ns] if row.end_ns is not None else [])
    row.start_ns, row.end_ns = min(starts), max(ends)
    row.has_root = row.has_root or any(s.parent_id is None for s in new)
    row.end_marked = row.end_marked or any(s.end_marker for s in new)
    return Stored(len(new), 0, [])


def untaken_at_arrival(row: TraceRow | _Arriving) -> bool:
    """Was the trace kept ``untaken`` as its spans arrived (never claimed by a sweep)?"""
    return row.status == "untaken" and row.claimed_at is None


def _decide(row: _Arriving, new: list[IncomingSpan], *, taken: bool) -> None:
    """Open the trace if ``new`` spans may be taken; keep a new trace none may be ``untaken``.

    A trace that was open before this request stays open (its earlier spans were undecided,
    or may be taken).
    """
    if taken:
        row.status = "open"
    elif row.status == "open" and row.span_count == len(new):  # its first spans
        row.status = "untaken"


def _upsert_traces(
    session: Session,
    *,
    trace_ids: list[str],
    defaults: Mapping[str, str],
    now: datetime,
    owner: str | None,
) -> dict[str, _Arriving]:
    """Write each trace's row (a new one open and empty), locking it until the commit; each
    row as it stands then, read back by the same statement.

    On PostgreSQL the ids go as one array (``unnest``) and the other values once each: a
    statement of ten parameters a row costs the driver more than the database (F-7).
    """
    fixed: dict[str, Any] = {
        "status": "open",
        "defaults": dict(defaults),
        "span_count": 0,
        "late_spans": 0,
        "has_root": False,
        "end_marked": False,
        "created_at": now,
        "last_span_at": now,
        "owner": owner,
        "tool_spans": 0,
    }
    postgres = session.get_bind().dialect.name == "postgresql"
    statement = (postgresql.insert if postgres else sqlite.insert)(TRACES)
    rows: list[dict[str, Any]] | None = None
    if postgres:
        ids = bindparam("trace_ids", trace_ids, type_=postgresql.ARRAY(String(32)))
        source = select(
            func.unnest(ids).label("trace_id"),
            *(literal(value, TRACES.c[name].type).label(name) for name, value in fixed.items()),
        )
        statement = statement.from_select(["trace_id", *fixed], source)
    else:
        rows = [{"trace_id": trace_id} | fixed for trace_id in trace_ids]
    update_: dict[str, Any] = {"last_span_at": statement.excluded.last_span_at}
    if defaults:
        update_["defaults"] = statement.excluded.defaults
    # Another key's request leaves the row as it is (it still locks it: requests take turns).
    mine = TRACES.c.owner.is_(None) | statement.excluded.owner.is_(None)
    mine |= TRACES.c.owner == statement.excluded.owner
    update_["defaults"] = case(
        (mine, update_.get("defaults", TRACES.c.defaults)), else_=TRACES.c.defaults
    )
    update_["last_span_at"] = case(
        (mine, statement.excluded.last_span_at), else_=TRACES.c.last_span_at
    )
    upsert = statement.on_conflict_do_update(index_elements=["trace_id"], set_=update_)
    found = session.execute(upsert.returning(*ARRIVING_COLUMNS), rows)
    return {row.trace_id: _Arriving(*row) for row in found}


def _span_row(trace_id: str, span: IncomingSpan, *, late: bool, now: datetime) -> dict[str, Any]:
    return {
        "trace_id": trace_id,
        "span_id": span.span_id,
        "parent_id": span.parent_id,
        "start_ns": span.start_ns,
        "end_ns": span.end_ns,
        "late": late,
        "received_at": now,
        "data": span.data,
    }


def due_traces(
    session: Session, *, quiet: timedelta, reclaim_after: timedelta, limit: int = 500
) -> list[str]:
    """Traces ready to become submissions: open, with a root span, and end-marked or quiet for
    ``quiet``; or claimed ``reclaim_after`` ago by a sweep that did not finish (it died).

    Served in turns of their senders (`sender`): each sender's first trace, then each one's
    second, and so on, so a flood of traces from one key never keeps another key's run
    waiting behind it. Within a sender's traces, end-marked ones first (the run said it is
    over), then the longest quiet.
    """
    now = utcnow()
    ready = (TraceRow.status == "open") & TraceRow.has_root
    ready &= or_(TraceRow.end_marked, TraceRow.last_span_at <= now - quiet)
    stale = (TraceRow.status == "finalising") & (TraceRow.claimed_at <= now - reclaim_after)
    within = (TraceRow.end_marked.desc(), TraceRow.last_span_at, TraceRow.trace_id)
    turn = func.row_number().over(partition_by=sender(), order_by=within)
    ranked = (
        select(
            TraceRow.trace_id,
            TraceRow.end_marked,
            TraceRow.last_span_at,
            turn.label("turn"),
        )
        .where(or_(ready, stale))
        .subquery()
    )
    query = select(ranked.c.trace_id).order_by(
        ranked.c.turn, ranked.c.end_marked.desc(), ranked.c.last_span_at, ranked.c.trace_id
    )
    return list(session.scalars(query.limit(limit)))


def sender() -> ColumnElement[str]:
    """Whose turn a trace waits for: the API key that opened it, else (spans stored without a
    key) the task its requests named, else one shared turn."""
    return func.coalesce(TraceRow.owner, TraceRow.defaults["task_id"].as_string(), "")


def claim(session: Session, *, trace_id: str, quiet: timedelta, reclaim_after: timedelta) -> bool:
    """Claim one due trace for this sweep; False when another sweep has it, or a span just came.

    A conditional UPDATE: of concurrent claimers exactly one sees its row changed.
    """
    now = utcnow()
    ready = (TraceRow.status == "open") & TraceRow.has_root
    ready &= or_(TraceRow.end_marked, TraceRow.last_span_at <= now - quiet)
    stale = (TraceRow.status == "finalising") & (TraceRow.claimed_at <= now - reclaim_after)
    result = session.execute(
        update(TraceRow)
        .where(TraceRow.trace_id == trace_id, or_(ready, stale))
        .values(status="finalising", claimed_at=now)
        .execution_options(synchronize_session=False)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


def claimed_spans(session: Session, *, trace_id: str) -> tuple[TraceRow, list[bytes]]:
    """A claimed trace's row and the spans it had when claimed (late ones are left out)."""
    row = session.get(TraceRow, trace_id)
    assert row is not None
    spans = session.scalars(
        select(TraceSpanRow.data)
        .where(TraceSpanRow.trace_id == trace_id, TraceSpanRow.late.is_(False))
        .order_by(TraceSpanRow.start_ns, TraceSpanRow.span_id)
    )
    return row, list(spans)


def finish(session: Session, *, trace_id: str, submission_id: str) -> None:
    """The claimed trace is submission ``submission_id`` now."""
    session.execute(
        update(TraceRow)
        .where(TraceRow.trace_id == trace_id, TraceRow.status == "finalising")
        .values(status="finalised", submission_id=submission_id, error=None)
    )


def fail(session: Session, *, trace_id: str, problems: list[tuple[str, str]]) -> None:
    """The claimed trace cannot become a submission: ``problems`` say why (kept on the row)."""
    session.execute(
        update(TraceRow)
        .where(TraceRow.trace_id == trace_id, TraceRow.status == "finalising")
        .values(
            status="failed",
            error={"problems": [{"field": f, "rule": r} for f, r in problems[:20]]},
        )
    )


def reason(row: TraceRow) -> str | None:
    """Why a refused or failed trace is not a run, in words (None for the others)."""
    error = row.error or {}
    if "message" in error:
        return str(error["message"])
    problems = error.get("problems") or []
    return "; ".join(f"{p['field']}: {p['rule']}" for p in problems) or None


def trace_of_id(session: Session, *, submission_id: str) -> TraceRow | None:
    """The trace a submission id names or was made from (``otlp-<trace id>``), if any."""
    from evalq.traces.convert import ID_PREFIX  # protobuf is loaded only where it is needed

    found = trace_of_submission(session, submission_id=submission_id)
    if found is None and submission_id.startswith(ID_PREFIX):
        found = session.get(TraceRow, submission_id.removeprefix(ID_PREFIX)[:32].lower())
    return found


def trace_of_submission(session: Session, *, submission_id: str) -> TraceRow | None:
    """The trace a submission was made from, if it was made from streamed spans."""
    return session.scalars(select(TraceRow).where(TraceRow.submission_id == submission_id)).first()


def count_open(session: Session) -> int:
    """Traces still receiving spans (or waiting for their quiet period)."""
    return int(session.scalar(select(func.count()).where(TraceRow.status == "open")) or 0)


def untake(session: Session, *, trace_id: str) -> None:
    """The claimed trace names no task and no rule took it: kept as ``untaken``."""
    session.execute(
        update(TraceRow)
        .where(TraceRow.trace_id == trace_id, TraceRow.status == "finalising")
        .values(status="untaken", error=None)
    )


def claim_untaken(session: Session, *, trace_id: str) -> bool:
    """Claim an untaken trace for a backfill (a conditional UPDATE, as `claim`)."""
    result = session.execute(
        update(TraceRow)
        .where(TraceRow.trace_id == trace_id, TraceRow.status == "untaken")
        .values(status="finalising", claimed_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


def untaken_traces(session: Session, *, start_ns: int, end_ns: int, limit: int) -> list[str]:
    """Untaken traces whose first span started in [start_ns, end_ns), oldest first; at most
    ``limit`` of them."""
    query = (
        select(TraceRow.trace_id)
        .where(
            TraceRow.status == "untaken",
            TraceRow.start_ns >= start_ns,
            TraceRow.start_ns < end_ns,
        )
        .order_by(TraceRow.start_ns, TraceRow.trace_id)
        .limit(limit)
    )
    return list(session.scalars(query))


def drop_untaken(session: Session, *, older_than: timedelta) -> int:
    """Delete the untaken traces (and their spans) last written to before ``older_than`` ago."""
    old = select(TraceRow.trace_id).where(
        TraceRow.status == "untaken", TraceRow.last_span_at <= utcnow() - older_than
    )
    ids = list(session.scalars(old))
    if not ids:
        return 0
    session.execute(delete(TraceSpanRow).where(TraceSpanRow.trace_id.in_(ids)))
    session.execute(delete(TraceRow).where(TraceRow.trace_id.in_(ids)))
    return len(ids)


def put_rule(session: Session, *, task_id: str, rule: TraceRule) -> None:
    """Create or replace the task's trace rule."""
    row = session.get(TraceRuleRow, task_id)
    if row is None:
        session.add(TraceRuleRow(task_id=task_id, rule=rule.model_dump(mode="json")))
    else:
        row.rule = rule.model_dump(mode="json")


def get_rule(session: Session, *, task_id: str) -> TraceRule | None:
    """The task's trace rule, if it has one."""
    row = session.get(TraceRuleRow, task_id)
    return None if row is None else TraceRule.model_validate(row.rule)


def delete_rule(session: Session, *, task_id: str) -> bool:
    """Remove the task's rule; False when it had none."""
    result = session.execute(delete(TraceRuleRow).where(TraceRuleRow.task_id == task_id))
    return bool(result.rowcount)  # type: ignore[attr-defined]


def all_rules(session: Session) -> list[TraceRuleOf]:
    """Every task's rule."""
    rows = session.scalars(select(TraceRuleRow).order_by(TraceRuleRow.task_id))
    return [TraceRuleOf(task_id=r.task_id, rule=TraceRule.model_validate(r.rule)) for r in rows]
