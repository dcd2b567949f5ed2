"""One key's flood of end-marked junk traces on a real `evalq api`: another key's run is swept
in the first round, the key is capped at its open traces, and the failed traces cost one log
line per sweep.

The server has a broker and no beat: the test runs the sweep (`finalise_due_traces`) itself,
so the number of sweeps and the order of claims are what is asserted, not times.
"""

from __future__ import annotations

import logging
import time

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from sqlalchemy import func, select

from evalq.service.client import Client
from evalq.service.trace_sweep import SWEEP_ROUND, finalise_due_traces
from evalq.store.db import session_scope
from evalq.store.models import TraceRow
from tests.integration.api.conftest import Server
from tests.support.otel_runs import trace_id_of, two_agent_run
from tests.support.reviews import review_task

pytestmark = pytest.mark.both_databases  # the sweep's turns are SQL of each database

FLOOD = 10_000
API_SETTINGS = {"trace_max_open_per_key": str(FLOOD)}
PROTOBUF = {"Content-Type": "application/x-protobuf"}


def junk(count: int, *, salt: int) -> ExportTraceServiceRequest:
    """``count`` one-span traces naming task t1, each end-marked: none can become a run (no
    LLM span gives its tokens), so each ends ``failed``."""
    body = ExportTraceServiceRequest()
    resource = body.resource_spans.add()
    for key, value in (("evalq.task_id", "t1"), ("evalq.tool", "junk")):
        pair = resource.resource.attributes.add(key=key)
        pair.value.string_value = value
    spans = resource.scope_spans.add().spans
    began = time.time_ns() - 10**9
    for number in range(count):
        trace_id = salt.to_bytes(8, "big") + (number + 1).to_bytes(8, "big")
        span = spans.add(trace_id=trace_id, span_id=(number + 1).to_bytes(8, "big"), name="junk")
        span.start_time_unix_nano, span.end_time_unix_nano = began, began + 1000
        marker = span.attributes.add(key="evalq.trace.end")
        marker.value.bool_value = True
    return body


def ended_run() -> tuple[bytes, str]:
    """The two-agent review run, its root span carrying evalq.trace.end: (body, trace id)."""
    spans = two_agent_run()
    body = encode_spans(spans)
    for span in body.resource_spans[0].scope_spans[0].spans:
        if not span.parent_span_id:
            marker = span.attributes.add(key="evalq.trace.end")
            marker.value.bool_value = True
    return body.SerializeToString(), trace_id_of(spans)


def post(server: Server, key: str, body: bytes) -> int:
    answer = server.client(key).post("/v1/traces", content=body, headers=PROTOBUF)
    return answer.status_code


def test_a_flood_from_one_key_neither_delays_another_keys_run_nor_floods_the_log(
    api: Server, caplog: pytest.LogCaptureFixture
) -> None:
    put = api.client().put("/v1/tasks/review-1", json=review_task("review-1"))
    assert put.status_code in (200, 201), put.text
    flood = junk(FLOOD, salt=1)
    assert post(api, "write", flood.SerializeToString()) == 200

    # The flooding key is at its cap: a request opening one more trace is refused whole ...
    one_more = junk(1, salt=2)
    refused = api.client("write").post(
        "/v1/traces", content=one_more.SerializeToString(), headers=PROTOBUF
    )
    assert refused.status_code == 429, refused.text
    assert "EVALQ_TRACE_MAX_OPEN_PER_KEY" in refused.json()["detail"]
    assert "holds 10,000 open traces" in refused.json()["detail"]
    assert int(refused.headers["Retry-After"]) >= 1
    new_id = one_more.resource_spans[0].scope_spans[0].spans[0].trace_id.hex()
    assert api.client().get(f"/v1/traces/{new_id}").status_code == 404
    # ... but spans of the traces it holds are still taken (a run under way is not cut off).
    again = junk(1, salt=1)
    again.resource_spans[0].scope_spans[0].spans[0].span_id = (FLOOD + 7).to_bytes(8, "big")
    assert post(api, "write", again.SerializeToString()) == 200

    # Another key's finished run, sent after the flood.
    run, run_id = ended_run()
    assert post(api, "rw", run) == 200

    caplog.set_level(logging.WARNING, logger="evalq.service.trace_sweep")
    made = finalise_due_traces(Client())  # one sweep
    assert f"otlp-{run_id}" in made
    with session_scope(api.db_url) as session:
        run_claimed = session.scalar(select(TraceRow.claimed_at).where(TraceRow.trace_id == run_id))
        before = session.scalar(
            select(func.count()).where(TraceRow.owner == "write", TraceRow.claimed_at < run_claimed)
        )
        failed = session.scalar(
            select(func.count()).where(TraceRow.owner == "write", TraceRow.status == "failed")
        )
    # Served in turns of keys: the run is claimed in the first turn, after at most one junk
    # trace (FIFO took the 10,000 junk traces first: the run waited 20 sweeps of 500).
    assert before is not None and before <= 1, before
    assert failed is not None and SWEEP_ROUND <= failed < FLOOD
    lines = [r for r in caplog.records if r.name == "evalq.service.trace_sweep"]
    assert len(lines) == 1, [r.getMessage()[:200] for r in lines]
    assert f"{failed} trace(s) cannot become a submission" in lines[0].getMessage()
    assert "(junk).evalq.model: missing" in lines[0].getMessage()
