"""The trace sweep when a trace fails in a way of its own: the trace ends ``failed`` with the
reason at its first attempt, the sweep goes on with the next trace, and one line is logged."""

from __future__ import annotations

import logging

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from sqlalchemy import update

from evalq.core.settings import Settings
from evalq.service.client import Client
from evalq.service.trace_sweep import finalise_due_traces
from evalq.store import traces
from evalq.store.db import session_scope
from evalq.store.models import TraceRow, TraceSpanRow
from evalq.traces.spans_in import incoming_spans
from tests.support.otel_runs import trace_id_of, two_agent_run
from tests.support.reviews import review_task

pytestmark = pytest.mark.both_databases  # the sweep's claims and turns are SQL


def test_a_trace_that_breaks_the_conversion_fails_once_and_the_sweep_goes_on(
    db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    client = Client(Settings(database_url=db_url, trace_quiet_s=0))
    client.put_task(review_task("review-1"))
    broken, good = two_agent_run(), two_agent_run()
    for spans in (broken, good):  # the broken one first: it is due first
        [(trace_id, items)] = incoming_spans(encode_spans(spans)).traces.items()
        with session_scope(db_url) as session:
            traces.store_spans(session, trace_id=trace_id, spans=items, defaults={}, max_spans=99)
    with session_scope(db_url) as session:  # a stored span that no longer reads as protobuf
        session.execute(
            update(TraceSpanRow)
            .where(TraceSpanRow.trace_id == trace_id_of(broken))
            .values(data=b"\x0a\xff\xff")
        )

    caplog.set_level(logging.WARNING, logger="evalq.service.trace_sweep")
    assert finalise_due_traces(client) == [f"otlp-{trace_id_of(good)}"]
    with session_scope(db_url) as session:
        row = session.get(TraceRow, trace_id_of(broken))
        assert row is not None and row.status == "failed"
        why = traces.reason(row)
    assert why is not None and why.startswith("(trace): cannot be made a submission: DecodeError")
    lines = [r.getMessage() for r in caplog.records if r.name == "evalq.service.trace_sweep"]
    assert len(lines) == 1 and "1 trace(s) cannot become a submission" in lines[0]
    assert finalise_due_traces(client) == []  # failed once: never claimed again
    with session_scope(db_url) as session:
        assert session.get(TraceRow, trace_id_of(broken)).status == "failed"  # type: ignore[union-attr]
