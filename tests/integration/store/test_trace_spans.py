"""Streamed spans in the store: stored once, counted, bounded; a trace claimed exactly once."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from sqlalchemy import event
from sqlalchemy.orm import Session
from tests.support.otel_runs import trace_id_of, two_agent_run

from evalq.core.schemas import MAX_TRACE_EDGES
from evalq.store import traces
from evalq.store.db import engine_for, session_scope
from evalq.store.models import TraceRow
from evalq.traces.spans_in import IncomingSpan, incoming_spans, request_of

pytestmark = pytest.mark.both_databases  # the database matters here (tests/conftest.py)

HOUR = timedelta(hours=1)
NOW = timedelta(0)


def store(url: str, spans: list, *, max_spans: int = 100) -> traces.Stored:  # type: ignore[type-arg]
    incoming = incoming_spans(encode_spans(spans))
    [(trace_id, items)] = incoming.traces.items()
    with session_scope(url) as session:
        return traces.store_spans(
            session, trace_id=trace_id, spans=items, defaults={}, max_spans=max_spans
        )


def due(url: str, *, quiet: timedelta) -> list[str]:
    with session_scope(url) as session:
        return traces.due_traces(session, quiet=quiet, reclaim_after=HOUR)


def test_a_trace_is_due_once_its_root_is_in_and_it_is_quiet_or_marked_ended(db_url: str) -> None:
    spans = two_agent_run()
    trace_id = trace_id_of(spans)
    children = [s for s in spans if s.parent is not None]
    assert store(db_url, children) == traces.Stored(8, 0, [])
    assert due(db_url, quiet=NOW) == []  # no root span: the run is not over
    assert store(db_url, children) == traces.Stored(0, 0, [])  # a retry stores nothing
    store(db_url, [s for s in spans if s.parent is None])
    assert due(db_url, quiet=HOUR) == []  # not quiet for an hour
    assert due(db_url, quiet=NOW) == [trace_id]

    marked = two_agent_run(resource={"evalq.trace.end": True, "evalq.task_id": "t"})
    # A resource attribute is not the marker: only a span's own attribute says the run is over.
    store(db_url, marked)
    assert trace_id_of(marked) not in due(db_url, quiet=HOUR)


def test_an_end_marked_trace_is_due_without_waiting(db_url: str) -> None:
    spans = two_agent_run()
    root = next(s for s in spans if s.parent is None)
    body = encode_spans(spans)
    for span in body.resource_spans[0].scope_spans[0].spans:
        if span.span_id == root.context.span_id.to_bytes(8, "big"):
            marker = span.attributes.add(key="evalq.trace.end")
            marker.value.bool_value = True
    incoming = incoming_spans(body)
    [(trace_id, items)] = incoming.traces.items()
    with session_scope(db_url) as session:
        traces.store_spans(session, trace_id=trace_id, spans=items, defaults={}, max_spans=100)
    assert due(db_url, quiet=HOUR) == [trace_id]


def test_of_concurrent_claims_exactly_one_wins(db_url: str) -> None:
    spans = two_agent_run()
    trace_id = trace_id_of(spans)
    store(db_url, spans)
    wins: list[bool] = []
    start = threading.Barrier(4)

    def claim() -> None:
        start.wait()
        with session_scope(db_url) as session:
            wins.append(traces.claim(session, trace_id=trace_id, quiet=NOW, reclaim_after=HOUR))

    threads = [threading.Thread(target=claim) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(wins) == [False, False, False, True]
    # A claim that is never finished is taken again once it is old (its sweep died).
    with session_scope(db_url) as session:
        assert due(db_url, quiet=NOW) == []
        assert traces.claim(session, trace_id=trace_id, quiet=NOW, reclaim_after=NOW)


def test_spans_after_the_claim_are_late_and_left_out_of_the_run(db_url: str) -> None:
    spans = two_agent_run()
    trace_id = trace_id_of(spans)
    store(db_url, spans[1:])
    with session_scope(db_url) as session:
        assert traces.claim(session, trace_id=trace_id, quiet=NOW, reclaim_after=HOUR)
    assert store(db_url, spans[:1]) == traces.Stored(0, 1, [])
    with session_scope(db_url) as session:
        row, stored = traces.claimed_spans(session, trace_id=trace_id)
        assert (row.span_count, row.late_spans) == (8, 1)
    names = sorted(
        span.name
        for resource in request_of(stored).resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    )
    assert names == sorted(s.name for s in spans[1:])


def test_a_trace_over_its_bound_is_refused_whole(db_url: str) -> None:
    spans = two_agent_run()
    trace_id = trace_id_of(spans)
    assert store(db_url, spans[:5], max_spans=8).stored == 5
    refused = store(db_url, spans[5:], max_spans=8)
    rule = f"trace {trace_id}: holds more than 8 spans (EVALQ_TRACE_MAX_SPANS)"
    assert refused.stored == 0 and len(refused.rejected) == 4
    assert all(reason.startswith(rule) for reason in refused.rejected)
    with session_scope(db_url) as session:
        row = session.get(TraceRow, trace_id)
        assert row is not None and (row.status, row.span_count) == ("refused", 0)
        _, kept = traces.claimed_spans(session, trace_id=trace_id)
        assert kept == []
    assert due(db_url, quiet=NOW) == []
    again = store(db_url, spans[:1], max_spans=8)
    assert again.rejected and again.rejected[0].startswith(rule)


def test_a_trace_belongs_to_the_key_that_opened_it(db_url: str) -> None:
    """Spans of another key are refused and change nothing (not the defaults, not the end);
    a trace opened without a key is taken by the first key that sends to it."""
    spans = two_agent_run()
    trace_id = trace_id_of(spans)
    children = [s for s in spans if s.parent is not None]
    root = [s for s in spans if s.parent is None]

    def send(part: list, owner: str | None, **defaults: str) -> traces.Stored:  # type: ignore[type-arg]
        [(_, items)] = incoming_spans(encode_spans(part)).traces.items()
        with session_scope(db_url) as session:
            return traces.store_spans(
                session,
                trace_id=trace_id,
                spans=items,
                defaults=defaults,
                max_spans=100,
                owner=owner,
            )

    assert send(children[:4], None) == traces.Stored(4, 0, [])  # `evalq import otlp`: no key
    assert send(children[4:], "alice", model="m") == traces.Stored(4, 0, [])  # alice takes it
    assert send(root, "mallory", model="forged") == traces.Stored(0, 0, [traces.foreign(trace_id)])
    with session_scope(db_url) as session:
        row = session.get(TraceRow, trace_id)
        assert row is not None
        assert (row.owner, row.span_count, row.has_root, row.defaults) == (
            "alice",
            8,
            False,
            {"model": "m"},
        )
    assert send(root, "alice") == traces.Stored(1, 0, [])


def test_a_trace_with_more_tool_calls_than_a_run_has_edges_is_refused_at_the_door(
    db_url: str,
) -> None:
    """A tool call is a step: 5,002 of them make 5,001 edges at least, over the submission's
    5,000, so the trace could only end `failed`; it is refused at once (EVALQ_TRACE_MAX_SPANS
    being higher), and so are its later spans."""
    trace_id = "ab" * 16

    def span(number: int, *, tool: bool = True) -> IncomingSpan:
        return IncomingSpan(
            trace_id=trace_id,
            span_id=f"{number:016x}",
            parent_id=None if number == 1 else f"{1:016x}",
            start_ns=1_800_000_000_000_000_000 + number,
            end_ns=1_800_000_000_000_000_001 + number,
            service_name="agent",
            end_marker=False,
            data=b"",
            tool=tool,
        )

    first = [span(1, tool=False)] + [span(n) for n in range(2, MAX_TRACE_EDGES + 4)]
    with session_scope(db_url) as session:
        kept = traces.store_spans(
            session, trace_id=trace_id, spans=first[:-1], defaults={}, max_spans=20_000
        )
    assert kept == traces.Stored(MAX_TRACE_EDGES + 2, 0, [])  # 5,001 tool calls: 5,000 edges
    with session_scope(db_url) as session:
        refused = traces.store_spans(
            session, trace_id=trace_id, spans=first[-1:], defaults={}, max_spans=20_000
        )
    rule = f"trace {trace_id}: holds {MAX_TRACE_EDGES + 2} tool calls, so at least "
    assert refused.stored == 0 and refused.rejected[0].startswith(rule)
    with session_scope(db_url) as session:
        row = session.get(TraceRow, trace_id)
        assert row is not None and (row.status, row.span_count) == ("refused", 0)
        assert traces.reason(row) == refused.rejected[0]


def one_span_traces(count: int, *, salt: int, span: int = 1) -> ExportTraceServiceRequest:
    """An OTLP request of ``count`` traces of one span each (a flood's shape: F-7 of issue 45),
    the span ids counting from ``span``."""
    body = ExportTraceServiceRequest()
    spans = body.resource_spans.add().scope_spans.add().spans
    began = time.time_ns() - 10**9
    for number in range(count):
        trace_id = salt.to_bytes(8, "big") + (number + 1).to_bytes(8, "big")
        added = spans.add(trace_id=trace_id, span_id=(span + number).to_bytes(8, "big"), name="s")
        added.start_time_unix_nano, added.end_time_unix_nano = began, began + 1000
    return body


@pytest.mark.parametrize("existing", [False, True], ids=["new traces", "traces seen before"])
def test_a_request_costs_the_same_statements_whatever_its_number_of_traces(
    db_url: str, existing: bool
) -> None:
    """Storing a request is a fixed number of statements, not a few per trace (issue 45, F-7:
    one request of 10,000 one-span traces cost 11-21 s when each trace was read, updated and
    counted apart)."""
    executed: list[str] = []
    loaded: list[object] = []

    def count(_conn: object, _cursor: object, statement: str, *_: object) -> None:
        executed.append(statement)

    def load(_session: object, instance: object) -> None:
        loaded.append(instance)

    counts = {}
    engine = engine_for(db_url)
    store(db_url, two_agent_run())  # the connection's own set-up statements, before counting
    for size in (10, 300):
        request = incoming_spans(one_span_traces(size, salt=size))
        if existing:  # the traces are stored already: the request adds a span to each
            with session_scope(db_url) as session:
                traces.store_request(
                    session, traces=request.traces, defaults={}, max_spans=100, owner="k"
                )
            request = incoming_spans(one_span_traces(size, salt=size, span=10_000))
        event.listen(engine, "before_cursor_execute", count)
        event.listen(Session, "loaded_as_persistent", load)
        try:
            executed.clear()
            loaded.clear()
            with session_scope(db_url) as session:
                stored = traces.store_request(
                    session, traces=request.traces, defaults={}, max_spans=100, owner="k"
                )
            counts[size] = (len(executed), len(loaded))
        finally:
            event.remove(engine, "before_cursor_execute", count)
            event.remove(Session, "loaded_as_persistent", load)
        assert len(stored) == size
    # statements and rows made objects alike: none per trace
    assert counts[300] == counts[10], counts
