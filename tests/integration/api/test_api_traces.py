"""POST /v1/traces on a real `evalq api` process: SDK spans in, evaluated submissions out."""

from __future__ import annotations

import base64
import gzip
import json
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from evalq.core.results import GraphResult
from evalq.core.schemas import Task, Trace
from evalq.metrics.graph import graph_metrics
from evalq.producer.client import Client
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.workers.bootstrap import worker_app
from evalq.workers.embedded import embedded_worker
from tests.integration.api.conftest import Server
from tests.support.otel_runs import (
    ANSWER,
    INPUT_TOKENS,
    LLM_COSTS,
    OUTPUT_TOKENS,
    as_otlp_json,
    as_protobuf,
    trace_id_of,
    two_agent_run,
)
from tests.support.reviews import review_task

PROTOBUF = {"Content-Type": "application/x-protobuf"}
TASK = review_task("review-1")
EXPECTED_TRACE = Trace.model_validate(
    {
        "steps": [
            {"tool": "search", "agent": "manager", "context": "find"},
            {"tool": "read", "agent": "researcher"},
            {"tool": "write", "agent": "researcher", "context": "draft"},
        ],
        "messages": [{"sender": "manager", "receiver": "researcher", "type": "handoff"}],
    }
)
"""What the spans say happened, written out by hand (tests/support/otel_runs.py)."""


@pytest.fixture(scope="module")
def traced(api: Server) -> Server:
    """The review task defined on the module's server."""
    put = api.client().put("/v1/tasks/review-1", json=TASK)
    assert put.status_code in (200, 201), put.text
    return api


def payload(server: Server, submission_id: str) -> dict[str, Any]:
    with session_scope(server.db_url) as session:
        row = queries.get_submission_row(session, submission_id=submission_id)
        return dict(row.payload) | {"priced_cost_usd": row.cost_usd}


def test_sdk_traces_in_both_encodings_are_evaluated_with_the_spans_figures(traced: Server) -> None:
    client = traced.client()
    genai, openinference = two_agent_run("genai"), two_agent_run("openinference")
    posted = client.post("/v1/traces", content=as_protobuf(genai), headers=PROTOBUF)
    assert posted.status_code == 201, posted.text
    as_json = client.post("/v1/traces", json=as_otlp_json(openinference))
    assert as_json.status_code == 201, as_json.text
    ids = [f"otlp-{trace_id_of(genai)}", f"otlp-{trace_id_of(openinference)}"]
    assert [posted.json()["submissions"][0]["id"], as_json.json()["submissions"][0]["id"]] == ids
    assert posted.json()["submissions"][0]["url"] == f"/v1/submissions/{ids[0]}"

    app = worker_app()
    try:
        with embedded_worker(app):
            statuses = Client(app=app).wait(ids, timeout=300)
    finally:
        app.close()
    assert set(statuses.values()) == {"done"}, statuses

    expected_graph = graph_metrics(EXPECTED_TRACE, Task.model_validate(TASK))
    for submission_id in ids:
        result = client.get(f"/v1/submissions/{submission_id}").json()
        assert result["status"] == "done"
        graph = GraphResult.model_validate(result["tiers"]["graph"]["metrics"])
        assert graph == expected_graph
        assert (graph.path_convergence, graph.tool_selection_accuracy) == (1.0, 1.0)
        assert graph.communication_overhead == 1.0  # the one message is a handoff
        assert graph.central_agent == "researcher"
        stored = payload(traced, submission_id)
        usage = stored["usage"]
        assert (usage["input_tokens"], usage["output_tokens"]) == (INPUT_TOKENS, OUTPUT_TOKENS)
        assert (usage["tool_calls"], usage["iterations"], usage["execution_time"]) == (3, 3, 10.0)
        assert stored["output"] == ANSWER
        assert Trace.model_validate(stored["trace"]).messages == EXPECTED_TRACE.messages
    assert payload(traced, ids[1])["priced_cost_usd"] == pytest.approx(sum(LLM_COSTS))


def test_the_same_trace_again_is_200_and_creates_nothing(traced: Server) -> None:
    client = traced.client()
    body = as_protobuf(two_agent_run())
    first = client.post("/v1/traces", content=body, headers=PROTOBUF)
    assert first.status_code == 201 and first.json()["submissions"][0]["created"] is True
    before = traced.counts()
    again = client.post("/v1/traces", content=body, headers=PROTOBUF)
    assert again.status_code == 200, again.text
    assert again.json()["submissions"][0]["created"] is False
    assert traced.counts() == before


def test_a_gzip_body_is_inflated_and_a_mapping_fills_what_the_trace_lacks(traced: Server) -> None:
    spans = two_agent_run(resource={"service.name": "bare"})
    body = gzip.compress(as_protobuf(spans))
    posted = traced.client().post(
        "/v1/traces",
        content=body,
        headers=PROTOBUF | {"Content-Encoding": "gzip"},
        params={"task_id": "review-1", "tool": "bare-agents", "variant": "T1"},
    )
    assert posted.status_code == 201, posted.text
    stored = payload(traced, f"otlp-{trace_id_of(spans)}")
    assert (stored["task_id"], stored["tool"], stored["variant"]) == (
        "review-1",
        "bare-agents",
        "T1",
    )


def test_a_trace_that_cannot_be_mapped_is_a_422_naming_span_and_attribute(
    traced: Server,
) -> None:
    data = as_otlp_json(two_agent_run(skip={"gen_ai.tool.name"}))
    search = next(
        span
        for resource in data["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
        if span["name"] == "execute_tool search"
    )
    before = traced.counts()
    refused = traced.client().post("/v1/traces", json=data)
    assert refused.status_code == 422, refused.text
    assert refused.json()["detail"] == [
        {
            "field": f"span {search['spanId']} (execute_tool search).gen_ai.tool.name",
            "rule": "missing: a tool span names its tool (gen_ai.tool.name or tool.name)",
        }
    ]
    assert traced.counts() == before


def test_an_undefined_task_is_a_422_naming_where_its_id_came_from(traced: Server) -> None:
    spans = two_agent_run(resource={"service.name": "x"})
    refused = traced.client().post(
        "/v1/traces",
        content=as_protobuf(spans),
        headers=PROTOBUF,
        params={"task_id": "no-such-task", "tool": "a"},
    )
    assert refused.status_code == 422, refused.text
    [problem] = refused.json()["detail"]
    assert problem["field"] == "(request).task_id"
    assert "no-such-task" in problem["rule"]


def test_other_bodies_are_415_413_or_422(traced: Server) -> None:
    client = traced.client()
    text = client.post("/v1/traces", content=b"{}", headers={"Content-Type": "text/plain"})
    assert text.status_code == 415
    garbage = client.post("/v1/traces", content=b"\xff\xfe garbage", headers=PROTOBUF)
    assert garbage.status_code == 422 and garbage.json()["detail"][0]["field"] == "(body)"
    large = client.post("/v1/traces", content=b"\0" * (6 * 1024 * 1024), headers=PROTOBUF)
    assert large.status_code == 413, large.text  # EVALQ_API_MAX_BODY_BYTES is 5 MiB
    bomb = gzip.compress(b"\0" * (6 * 1024 * 1024))
    inflated = client.post(
        "/v1/traces", content=bomb, headers=PROTOBUF | {"Content-Encoding": "gzip"}
    )
    assert inflated.status_code == 413, inflated.text
    assert "once inflated" in inflated.json()["detail"]
    reader = traced.client("read").post("/v1/traces", json=json.loads("{}"))
    assert reader.status_code == 403


def bare_traces(count: int) -> ExportTraceServiceRequest:
    """``count`` one-span traces with no attribute at all: none of them can be converted."""
    request = ExportTraceServiceRequest()
    spans = request.resource_spans.add().scope_spans.add().spans
    for number in range(1, count + 1):
        spans.add(trace_id=number.to_bytes(16, "big"), span_id=number.to_bytes(8, "big"), name="s")
    return request


@pytest.mark.parametrize("encoding", ["protobuf", "json"])
def test_more_traces_than_the_batch_limit_is_a_422_before_any_is_converted(
    traced: Server, encoding: str
) -> None:
    """The limit used to be checked on the converted traces: 28,960 were converted (10 s,
    123 MB) before the 422. These 51 traces could not be converted; the limit is named."""
    request = bare_traces(51)  # the server's EVALQ_API_MAX_BATCH is 50
    client = traced.client()
    if encoding == "protobuf":
        refused = client.post("/v1/traces", content=request.SerializeToString(), headers=PROTOBUF)
    else:
        data = json_format.MessageToDict(request)
        for span in data["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            span["traceId"] = base64.b64decode(span["traceId"]).hex()
            span["spanId"] = base64.b64decode(span["spanId"]).hex()
        refused = client.post("/v1/traces", json=data)
    assert refused.status_code == 422, refused.text
    rule = "holds more than 50 traces; at most 50 per request (EVALQ_API_MAX_BATCH)"
    assert refused.json()["detail"] == [{"field": "(body)", "rule": rule}]
    within = client.post(
        "/v1/traces", content=bare_traces(50).SerializeToString(), headers=PROTOBUF
    )
    assert within.status_code == 422, within.text  # 50 traces are converted: their own error
    assert within.json()["detail"][0]["field"] == "span 0000000000000001 (s).evalq.model"


def test_every_gzip_member_is_read_and_all_count_towards_the_size_limit(traced: Server) -> None:
    """Data after the first gzip member used to be dropped without a word."""
    first, second = two_agent_run(), two_agent_run("openinference")
    gzipped = PROTOBUF | {"Content-Encoding": "gzip"}
    # Protobuf messages written one after the other are one message: both traces, two members.
    body = gzip.compress(as_protobuf(first)) + gzip.compress(as_protobuf(second))
    client = traced.client()
    posted = client.post("/v1/traces", content=body, headers=gzipped)
    assert posted.status_code == 201, posted.text
    ids = [item["id"] for item in posted.json()["submissions"]]
    assert ids == [f"otlp-{trace_id_of(first)}", f"otlp-{trace_id_of(second)}"]

    before = traced.counts()
    bomb = gzip.compress(b"\0" * 1024 * 1024) * 6  # each member 1 MiB, 6 MiB in all
    inflated = client.post("/v1/traces", content=bomb, headers=gzipped)
    assert inflated.status_code == 413, inflated.text
    assert "once inflated" in inflated.json()["detail"]
    trailing = client.post("/v1/traces", content=body + b"not gzip", headers=gzipped)
    assert trailing.status_code == 422, trailing.text
    assert trailing.json()["detail"] == [
        {"field": "(body)", "rule": "Content-Encoding is gzip but the body is not whole gzip"}
    ]
    assert traced.counts() == before
