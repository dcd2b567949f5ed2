"""POST /v1/traces on a real `evalq api` process: spans in as exporters send them, one
submission per finished trace, evaluated.

The server here has a broker, so the trace sweep is the beat's; the tests run the same sweep
(`finalise_due_traces`) themselves, with an embedded worker evaluating. The real SDK exporter
against a server without a broker (its own sweep thread): test_otel_exporter.py.
"""

from __future__ import annotations

import gzip
import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from celery import Celery
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.sdk.trace import ReadableSpan

from evalq.core.results import GraphResult
from evalq.core.schemas import Task, Trace
from evalq.core.settings import Settings
from evalq.metrics.graph import graph_metrics
from evalq.read.leaderboard import leaderboard
from evalq.read.usage import SELF_REPORTED
from evalq.service.client import Client
from evalq.service.trace_sweep import finalise_due_traces
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
    T0,
    as_otlp_json,
    as_protobuf,
    trace_id_of,
    two_agent_run,
)
from tests.support.processes import PATIENCE, wait_until
from tests.support.reviews import review_task
from tests.support.ui import sign_in

API_SETTINGS = {"trace_quiet_s": "1", "trace_max_spans": "12", "trace_max_request_spans": "40"}
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


@pytest.fixture(scope="module")
def worker(traced: Server) -> Iterator[Celery]:
    """An embedded worker over the server's broker, for the module."""
    app = worker_app()
    try:
        with embedded_worker(app):
            yield app
    finally:
        app.close()


def export(server: Server, spans: list[ReadableSpan], **params: str) -> ExportTraceServiceResponse:
    """POST the spans as the OTLP/HTTP exporter does; the decoded answer (a 200)."""
    posted = server.client().post(
        "/v1/traces", content=as_protobuf(spans), headers=PROTOBUF, params=params
    )
    assert posted.status_code == 200, posted.text
    assert posted.headers["content-type"] == "application/x-protobuf"
    return ExportTraceServiceResponse.FromString(posted.content)


def finalised(app: Celery, trace_id: str) -> str:
    """Run the trace sweep until the trace is a submission; its id."""
    client = Client(app=app)

    def made() -> bool:
        finalise_due_traces(client)
        with session_scope(client.url) as session:
            return session.scalar(trace_submission(trace_id)) is not None

    wait_until(made, timeout=30, what=f"trace {trace_id} to become a submission")
    with session_scope(client.url) as session:
        found = session.scalar(trace_submission(trace_id))
    assert isinstance(found, str)
    return found


def trace_submission(trace_id: str) -> Any:
    from sqlalchemy import select

    from evalq.store.models import TraceRow

    return select(TraceRow.submission_id).where(TraceRow.trace_id == trace_id)


def payload(server: Server, submission_id: str) -> dict[str, Any]:
    with session_scope(server.db_url) as session:
        row = queries.get_submission_row(session, submission_id=submission_id)
        return dict(row.payload) | {"priced_cost_usd": row.cost_usd}


def submissions_of(server: Server, trace_id: str) -> int:
    with session_scope(server.db_url) as session:
        from sqlalchemy import func, select

        from evalq.store.models import SubmissionRow

        query = select(func.count()).where(SubmissionRow.id.contains(trace_id))
        return int(session.scalar(query) or 0)


def test_spans_one_per_request_out_of_order_and_retried_make_one_evaluated_submission(
    traced: Server, worker: Celery
) -> None:
    spans = two_agent_run()
    trace_id = trace_id_of(spans)
    root = next(s for s in spans if s.parent is None)
    # The root first (out of order: the SDK ends it last), then each span alone, each twice.
    for span in [root, *reversed([s for s in spans if s is not root])]:
        for _ in range(2):
            answer = export(traced, [span])
            assert not answer.HasField("partial_success"), answer
    state = traced.client().get(f"/v1/traces/{trace_id}").json()
    assert (state["status"], state["spans"], state["has_root"]) == ("open", 9, True)

    submission_id = finalised(worker, trace_id)
    assert submission_id == f"otlp-{trace_id}"
    statuses = Client(app=worker).wait([submission_id], timeout=300 * PATIENCE)
    assert statuses == {submission_id: "done"}
    result = traced.client().get(f"/v1/submissions/{submission_id}").json()
    graph = GraphResult.model_validate(result["tiers"]["graph"]["metrics"])
    assert graph == graph_metrics(EXPECTED_TRACE, Task.model_validate(TASK))
    stored = payload(traced, submission_id)
    usage = stored["usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (INPUT_TOKENS, OUTPUT_TOKENS)
    assert (usage["tool_calls"], usage["iterations"], usage["execution_time"]) == (3, 3, 10.0)
    assert stored["output"] == ANSWER
    assert re.fullmatch(r"[0-9a-f]{16}", str(result["metadata"].pop("span_id")))
    assert result["metadata"] == {"trace_id": trace_id, "service.name": "reviewer"}
    assert result["trace"] == {
        "trace_id": trace_id,
        "service_name": "reviewer",
        "spans": 9,
        "late_spans": 0,
        "started_at": "2025-06-15T15:06:40+00:00",
        "ended_at": "2025-06-15T15:06:50+00:00",
    }


def test_a_span_after_finalisation_is_stored_counted_and_not_evaluated_again(
    traced: Server, worker: Celery
) -> None:
    spans = two_agent_run()
    trace_id = trace_id_of(spans)
    late = spans[0]  # a leaf span (the SDK lists spans as they end)
    export(traced, spans[1:])
    submission_id = finalised(worker, trace_id)
    before = payload(traced, submission_id)
    assert before["usage"]["iterations"] == 2  # the first LLM span was not there
    export(traced, [late])
    export(traced, [late])  # retried: counted once
    result = traced.client().get(f"/v1/submissions/{submission_id}").json()
    assert (result["trace"]["spans"], result["trace"]["late_spans"]) == (8, 1)
    finalise_due_traces(Client(app=worker))
    assert payload(traced, submission_id) == before
    assert submissions_of(traced, trace_id) == 1


def test_concurrent_sweeps_make_one_submission_per_trace(traced: Server, worker: Celery) -> None:
    runs = [two_agent_run() for _ in range(4)]
    body = ExportTraceServiceRequest()
    for spans in runs:
        body.resource_spans.extend(encode_spans(spans).resource_spans)
    posted = traced.client().post("/v1/traces", content=body.SerializeToString(), headers=PROTOBUF)
    assert posted.status_code == 200, posted.text
    time.sleep(1.2)  # the quiet period
    made: list[list[str]] = []
    sweeps = [
        threading.Thread(target=lambda: made.append(finalise_due_traces(Client(app=worker))))
        for _ in range(3)
    ]
    for sweep in sweeps:
        sweep.start()
    for sweep in sweeps:
        sweep.join(60 * PATIENCE)
        assert not sweep.is_alive(), "a sweep still running: its submissions are not counted yet"
    ids = sorted(
        sid
        for one in made
        for sid in one
        if sid.removeprefix("otlp-") in {trace_id_of(spans) for spans in runs}
    )
    assert ids == sorted(f"otlp-{trace_id_of(spans)}" for spans in runs)
    for spans in runs:
        assert submissions_of(traced, trace_id_of(spans)) == 1


def test_a_batch_with_one_bad_trace_stores_the_good_ones_and_names_the_bad(
    traced: Server, worker: Celery
) -> None:
    good, other, bad = two_agent_run(), two_agent_run("openinference"), two_agent_run()
    data = as_otlp_json(good + other + bad)
    bad_id = trace_id_of(bad)
    refused = 0
    for resource in data["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                if span["traceId"] == bad_id and span["name"] == "invoke_agent researcher":
                    span["startTimeUnixNano"] = "17"  # 17 ns after 1970
                    refused += 1
    posted = traced.client().post("/v1/traces", json=data)
    assert posted.status_code == 200, posted.text
    assert posted.headers["content-type"] == "application/json"
    partial = posted.json()["partialSuccess"]
    assert (refused, partial["rejectedSpans"]) == (1, "1")
    assert (
        "(invoke_agent researcher).startTimeUnixNano: 17 is not a time this run can have"
        in (partial["errorMessage"])
    )
    for spans in (good, other):
        submission_id = finalised(worker, trace_id_of(spans))
        assert payload(traced, submission_id)["usage"]["tool_calls"] == 3
    # The bad trace lacks a span its children name: it is kept, and says why it is not a run.
    finalise_due_traces(Client(app=worker))
    state = traced.client().get(f"/v1/traces/{bad_id}").json()
    assert (state["status"], state["spans"], state["submission_id"]) == ("failed", 8, None)
    assert "is not in the trace" in state["error"]["problems"][0]["rule"]


def test_each_bad_input_is_refused_with_its_reason_and_nothing_else_is_lost(
    traced: Server,
) -> None:
    client = traced.client()
    garbage = client.post("/v1/traces", content=b"\xff\xfe garbage", headers=PROTOBUF)
    assert garbage.status_code == 422
    assert garbage.json()["detail"] == [
        {"field": "(body)", "rule": "not an OTLP ExportTraceServiceRequest in protobuf encoding"}
    ]
    good = two_agent_run()
    body = encode_spans(good)
    spans = body.resource_spans[0].scope_spans[0].spans
    no_trace = spans.add(
        span_id=b"\1" * 8, name="orphan", start_time_unix_nano=T0, end_time_unix_nano=T0 + 1
    )
    assert no_trace.trace_id == b""
    spans.add(
        trace_id=b"\2" * 16,
        span_id=b"\2" * 8,
        name="future",
        start_time_unix_nano=T0,
        end_time_unix_nano=T0 * 2,
    )
    posted = client.post("/v1/traces", content=body.SerializeToString(), headers=PROTOBUF)
    answer = ExportTraceServiceResponse.FromString(posted.content)
    assert answer.partial_success.rejected_spans == 2
    message = answer.partial_success.error_message
    assert "span 0101010101010101 (orphan).traceId: must be 16 bytes (32 hex digits)" in message
    assert "span 0202020202020202 (future).endTimeUnixNano" in message
    state = client.get(f"/v1/traces/{trace_id_of(good)}").json()
    assert state["spans"] == len(good) == 9


def test_a_trace_over_its_bound_is_refused_whole_with_the_reason(traced: Server) -> None:
    """The bound is 12 spans here: a run of 9, then 9 more spans of the same trace."""
    first, more = two_agent_run(), two_agent_run()
    trace_id = trace_id_of(first)
    assert not export(traced, first).HasField("partial_success")
    again = encode_spans(more)
    for resource in again.resource_spans:
        for scope in resource.scope_spans:
            for span in scope.spans:
                span.trace_id = bytes.fromhex(trace_id)
                span.parent_span_id = span.parent_span_id or bytes.fromhex("00000000000000aa")
    posted = traced.client().post("/v1/traces", content=again.SerializeToString(), headers=PROTOBUF)
    answer = ExportTraceServiceResponse.FromString(posted.content)
    rule = f"trace {trace_id}: holds more than 12 spans (EVALQ_TRACE_MAX_SPANS)"
    assert answer.partial_success.rejected_spans == 9
    assert answer.partial_success.error_message.startswith(rule)
    state = traced.client().get(f"/v1/traces/{trace_id}").json()
    assert (state["status"], state["spans"]) == ("refused", 0)
    assert state["error"]["message"].startswith(rule) and state["reason"].startswith(rule)
    metrics = traced.client().get("/metrics").text
    assert 'evalq_traces{status="refused"} 1.0' in metrics
    # where people look for the run, the answer names its trace and why it is not one
    missing = traced.client().get(f"/v1/submissions/otlp-{trace_id}")
    assert missing.status_code == 404
    assert f"its trace {trace_id} is refused ({rule}" in missing.json()["detail"]
    later = export(traced, first[:1])  # already stored once, but the trace is refused now
    assert later.partial_success.rejected_spans == 1


def test_a_request_over_the_span_limit_is_a_422_before_any_span_is_read(traced: Server) -> None:
    body = ExportTraceServiceRequest()
    spans = body.resource_spans.add().scope_spans.add().spans
    for number in range(1, 42):
        spans.add(trace_id=number.to_bytes(16, "big"), span_id=number.to_bytes(8, "big"))
    refused = traced.client().post("/v1/traces", content=body.SerializeToString(), headers=PROTOBUF)
    assert refused.status_code == 422, refused.text
    rule = "holds more than 40 spans; at most 40 per request (EVALQ_TRACE_MAX_REQUEST_SPANS)"
    assert refused.json()["detail"] == [{"field": "(body)", "rule": rule}]
    assert traced.client().get(f"/v1/traces/{(1).to_bytes(16, 'big').hex()}").status_code == 404


def test_gzip_bodies_and_the_request_mapping_fill_what_the_trace_lacks(
    traced: Server, worker: Celery
) -> None:
    spans = two_agent_run(resource={"service.name": "bare"})
    body = gzip.compress(as_protobuf(spans))
    posted = traced.client().post(
        "/v1/traces",
        content=body,
        headers=PROTOBUF | {"Content-Encoding": "gzip"},
        params={"task_id": "review-1", "tool": "bare-agents", "variant": "T1"},
    )
    assert posted.status_code == 200, posted.text
    stored = payload(traced, finalised(worker, trace_id_of(spans)))
    assert (stored["task_id"], stored["tool"], stored["variant"]) == (
        "review-1",
        "bare-agents",
        "T1",
    )
    assert stored["metadata"]["service.name"] == "bare"


def test_an_openinference_run_in_json_is_priced_from_its_spans(
    traced: Server, worker: Celery
) -> None:
    spans = two_agent_run("openinference")
    posted = traced.client().post("/v1/traces", json=as_otlp_json(spans))
    assert posted.status_code == 200 and posted.json() == {}, posted.text
    submission_id = finalised(worker, trace_id_of(spans))
    assert payload(traced, submission_id)["priced_cost_usd"] == pytest.approx(sum(LLM_COSTS))


def test_other_bodies_are_415_413_or_422(traced: Server) -> None:
    client = traced.client()
    text = client.post("/v1/traces", content=b"{}", headers={"Content-Type": "text/plain"})
    assert text.status_code == 415
    large = client.post("/v1/traces", content=b"\0" * (6 * 1024 * 1024), headers=PROTOBUF)
    assert large.status_code == 413, large.text  # EVALQ_API_MAX_BODY_BYTES is 5 MiB
    bomb = gzip.compress(b"\0" * (6 * 1024 * 1024))
    inflated = client.post(
        "/v1/traces", content=bomb, headers=PROTOBUF | {"Content-Encoding": "gzip"}
    )
    assert inflated.status_code == 413, inflated.text
    assert "once inflated" in inflated.json()["detail"]
    trailing = client.post(
        "/v1/traces",
        content=gzip.compress(as_protobuf(two_agent_run())) + b"not gzip",
        headers=PROTOBUF | {"Content-Encoding": "gzip"},
    )
    assert trailing.status_code == 422, trailing.text
    reader = traced.client("read").post("/v1/traces", json=json.loads("{}"))
    assert reader.status_code == 403


def test_a_trace_takes_spans_only_from_the_key_that_opened_it(traced: Server) -> None:
    """Another write key that knows an open trace id cannot end it or add to it."""
    spans = two_agent_run()
    trace_id = trace_id_of(spans)
    root = [s for s in spans if s.parent is None]
    assert not export(traced, [s for s in spans if s.parent is not None]).HasField(
        "partial_success"
    )
    posted = traced.client("write").post(
        "/v1/traces",
        content=as_protobuf(root),
        headers=PROTOBUF,
        params={"task_id": "t1", "model": "forged"},
    )
    answer = ExportTraceServiceResponse.FromString(posted.content)
    assert answer.partial_success.rejected_spans == 1
    assert answer.partial_success.error_message == (
        f"trace {trace_id}: opened by another API key; only the key that sent its first spans "
        "adds spans to it"
    )
    state = traced.client().get(f"/v1/traces/{trace_id}").json()
    assert (state["status"], state["spans"], state["has_root"]) == ("open", 8, False)
    assert not export(traced, root).HasField("partial_success")  # the owner's root is taken
    state = traced.client().get(f"/v1/traces/{trace_id}").json()
    assert (state["spans"], state["has_root"]) == (9, True)


def test_a_trace_is_collected_only_under_a_key_its_task_trusts(
    traced: Server, worker: Celery, tmp_path: Path
) -> None:
    # before: any run with a timed trace read usage_source "trace", whoever wrote the trace
    task = review_task("review-trusted") | {"trusted_trace_keys": ["rw"]}
    put = traced.client().put("/v1/tasks/review-trusted", json=task)
    assert put.status_code in (200, 201), put.text
    resource = {"service.name": "reviewer", "evalq.task_id": "review-trusted"}
    # one run exported by the runtime's key ("rw", trusted), one by another write key; the
    # second answers in other words (the same output would be held as a copy of the first)
    runtime = two_agent_run(resource=resource | {"evalq.tool": "runtime-agent"})
    other = two_agent_run(
        resource=resource | {"evalq.tool": "other-agent"},
        answer="Long documents, sparse attention; weak baselines, so the gains are unclear.",
    )
    assert not export(traced, runtime).HasField("partial_success")
    posted = traced.client("write").post("/v1/traces", content=as_protobuf(other), headers=PROTOBUF)
    assert posted.status_code == 200, posted.text
    assert not ExportTraceServiceResponse.FromString(posted.content).HasField("partial_success")
    collected = finalised(worker, trace_id_of(runtime))
    submitted = finalised(worker, trace_id_of(other))
    statuses = Client(app=worker).wait([collected, submitted], timeout=300 * PATIENCE)
    assert set(statuses.values()) <= {"done", "degraded"}, statuses
    with session_scope(traced.db_url) as session:
        stored = {
            sid: queries.get_submission_row(session, submission_id=sid).trace_provenance
            for sid in (collected, submitted)
        }
    assert stored == {collected: "collected", submitted: "submitted"}
    board = traced.client().get("/v1/tasks/review-trusted/leaderboard").json()
    sources = {e["submission_id"]: e["usage_source"] for e in board["entries"]}
    assert sources == {collected: "collected-trace", submitted: "own-trace"}
    assert (board["self_reported"], board["own_trace"]) == (1, 1)
    # the run's own answer and its page say the same as the board (one reader, every door)
    for sid, source, label in (
        (collected, "collected-trace", "collected trace"),
        (submitted, "own-trace", "own trace (unverified)"),
    ):
        assert traced.client("read").get(f"/v1/submissions/{sid}").json()["usage_source"] == source
        with httpx.Client(base_url=traced.url, timeout=30 * PATIENCE) as browser:
            assert sign_in(browser, traced.keys["read"]).status_code == 303
            page = browser.get(f"/ui/runs/{sid}").text
        assert f'<td class="usage {source}" id="usage-source">{label}</td>' in page
    # a profile that ranks only collected usage ranks the runtime's run, not the other
    profile = tmp_path / "traced.toml"
    profile.write_text('[arena]\nusage = "traced"\n')
    settings = Settings(database_url=traced.db_url, profile_path=profile)
    with session_scope(traced.db_url) as session:
        ranked = leaderboard(session, task_id="review-trusted", settings=settings)
        page = leaderboard(session, task_id="review-trusted", settings=settings, limit=1)
    ranks = {e.submission_id: (e.rank, e.unranked) for e in ranked.entries}
    assert ranks == {collected: (1, None), submitted: (None, SELF_REPORTED)}
    assert page.entries == ranked.entries[:1] and page.total == 2
