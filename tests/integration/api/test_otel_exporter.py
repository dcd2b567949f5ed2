"""The real OpenTelemetry SDK exporter (OTLP/HTTP, protobuf) into a real `evalq api` process.

No in-memory exporter hands over whole traces here: `SimpleSpanProcessor` posts each span as it
ends, `BatchSpanProcessor` posts what its timer or its batch size cuts, and the server (without
a broker: it evaluates in-process and runs the trace sweep itself) makes one submission per run
once the run is over, with the whole run's figures, and evaluates it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.trace import Tracer

from tests.integration.api.conftest import Server, serve_api
from tests.support.processes import PATIENCE, wait_until
from tests.support.reviews import review_task

SETTINGS = {"trace_quiet_s": "1", "trace_sweep_every_s": "0.3"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """`evalq api` without a broker, over a fresh SQLite store, with the review task."""
    with serve_api("sqlite", tmp_path_factory.mktemp("otel"), broker=False, extra=SETTINGS) as api:
        put = api.client().put("/v1/tasks/review-1", json=review_task("review-1"))
        assert put.status_code in (200, 201), put.text
        yield api


class Counted(SpanExporter):
    """The real OTLP/HTTP exporter, with each export's batch size and result recorded."""

    def __init__(self, server: Server) -> None:
        self.real = OTLPSpanExporter(
            endpoint=f"{server.url}/v1/traces",
            headers={"Authorization": f"Bearer {server.keys['write']}"},
            timeout=10 * PATIENCE,  # the exporter's 10 s, retries included, on a busy API
        )
        self.exports: list[tuple[int, SpanExportResult]] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        result = self.real.export(spans)
        self.exports.append((len(spans), result))
        return result

    def shutdown(self) -> None:
        self.real.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self.real.force_flush(timeout_millis)


def provider_for(exporter: Counted, *, batch: bool) -> TracerProvider:
    resource = Resource.create(
        {"service.name": "reviewer", "evalq.task_id": "review-1", "evalq.tool": "sdk-agents"}
    )
    provider = TracerProvider(resource=resource)
    processor = (
        BatchSpanProcessor(exporter, schedule_delay_millis=150, max_export_batch_size=3)
        if batch
        else SimpleSpanProcessor(exporter)
    )
    provider.add_span_processor(processor)
    return provider


def agent_run(tracer: Tracer, *, turns: int, pause_s: float) -> str:
    """A GenAI-convention agent: per turn one chat (in 1000 / out 140) then one tool call,
    and a final chat (in 1000 / out 140) that answers. Real clock, with pauses between spans.
    Returns the trace id."""
    with tracer.start_as_current_span(
        "invoke_agent coder",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "coder"},
    ) as root:
        for turn in range(turns + 1):
            with tracer.start_as_current_span(
                "chat gpt-4o",
                attributes={
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "gpt-4o",
                    "gen_ai.usage.input_tokens": 1000,
                    "gen_ai.usage.output_tokens": 140,
                },
            ):
                time.sleep(pause_s)
            if turn < turns:
                with tracer.start_as_current_span(
                    "execute_tool search",
                    attributes={
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": "search",
                    },
                ):
                    time.sleep(pause_s)
        root.set_attribute("evalq.output", "The parser handles ISO dates now.")
        return f"{root.get_span_context().trace_id:032x}"


def evaluated(server: Server, trace_id: str) -> dict[str, object]:
    """Wait until the trace's submission is done; its result."""
    client = server.client("read")
    url = f"/v1/submissions/otlp-{trace_id}"

    def done() -> bool:
        answer = client.get(url)
        return answer.status_code == 200 and answer.json()["status"] == "done"

    wait_until(done, timeout=180, what=f"otlp-{trace_id} to be evaluated")
    result: dict[str, object] = client.get(url).json()
    return result


def usage_of(server: Server, trace_id: str) -> dict[str, object]:
    from evalq.store import queries
    from evalq.store.db import session_scope

    with session_scope(server.db_url) as session:
        row = queries.get_submission_row(session, submission_id=f"otlp-{trace_id}")
        usage: dict[str, object] = row.payload["usage"]
        return usage


def submissions(server: Server) -> int:
    from sqlalchemy import func, select

    from evalq.store.db import session_scope
    from evalq.store.models import SubmissionRow

    with session_scope(server.db_url) as session:
        return int(session.scalar(select(func.count()).select_from(SubmissionRow)) or 0)


def test_simple_span_processor_one_span_per_request_makes_one_evaluated_run(
    server: Server,
) -> None:
    exporter = Counted(server)
    provider = provider_for(exporter, batch=False)
    before = submissions(server)
    trace_id = agent_run(provider.get_tracer("agent"), turns=2, pause_s=0.01)
    provider.shutdown()
    assert exporter.exports == [(1, SpanExportResult.SUCCESS)] * 6  # 3 chats, 2 tools, root
    result = evaluated(server, trace_id)
    usage = usage_of(server, trace_id)
    assert (usage["input_tokens"], usage["output_tokens"]) == (3000, 420)
    assert (usage["tool_calls"], usage["iterations"]) == (2, 3)
    assert re.fullmatch(r"[0-9a-f]{16}", str(result["metadata"].pop("span_id")))
    assert result["metadata"] == {"trace_id": trace_id, "service.name": "reviewer"}
    trace = result["trace"]
    assert isinstance(trace, dict) and (trace["spans"], trace["late_spans"]) == (6, 0)
    assert submissions(server) == before + 1


def test_batch_span_processor_run_over_several_exports_is_whole(server: Server) -> None:
    """The issue's case: a run cut into batches by the export timer and the batch size used to
    be evaluated on its last batch only (1800/120 tokens and 1 iteration for 3000/420 and 2)."""
    exporter = Counted(server)
    provider = provider_for(exporter, batch=True)
    trace_id = agent_run(provider.get_tracer("agent"), turns=4, pause_s=0.12)
    provider.shutdown()
    sizes = [size for size, result in exporter.exports if result is SpanExportResult.SUCCESS]
    assert len(sizes) == len(exporter.exports) >= 3 and sum(sizes) == 10, exporter.exports
    evaluated(server, trace_id)
    usage = usage_of(server, trace_id)
    assert (usage["input_tokens"], usage["output_tokens"]) == (5000, 700)
    assert (usage["tool_calls"], usage["iterations"]) == (4, 5)


def test_a_run_survives_the_api_being_killed_mid_trace(server: Server, tmp_path: Path) -> None:
    """Spans are in the store before the 200: a server killed (SIGKILL) between two halves of
    a run loses none, and the restarted server makes the whole run one submission."""
    exporter = Counted(server)
    provider = provider_for(exporter, batch=False)
    tracer = provider.get_tracer("agent")
    with tracer.start_as_current_span(
        "invoke_agent coder",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "coder"},
    ) as root:
        for turn in range(2):
            with tracer.start_as_current_span(
                "chat gpt-4o",
                attributes={
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "gpt-4o",
                    "gen_ai.usage.input_tokens": 700,
                    "gen_ai.usage.output_tokens": 30,
                },
            ):
                pass
            if turn == 0:
                server.restart(kill=True)  # after the first chat span was stored
        trace_id = f"{root.get_span_context().trace_id:032x}"
    provider.shutdown()
    assert [result for _, result in exporter.exports] == [SpanExportResult.SUCCESS] * 3
    evaluated(server, trace_id)
    usage = usage_of(server, trace_id)
    assert (usage["input_tokens"], usage["iterations"]) == (1400, 2)


def test_the_collector_config_sends_what_evalq_reads(server: Server) -> None:
    """examples/otel/collector.yaml, loaded: its traces pipeline batches and exports over
    OTLP/HTTP; a body sent as its exporter is configured (protobuf, gzip, the bearer header,
    the endpoint) holding one good and one bad trace is answered 200 with the bad one in
    partialSuccess, and the good one becomes its run."""
    import gzip
    import os
    import re

    import httpx
    import yaml
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceResponse,
    )

    from tests.support.otel_runs import trace_id_of, two_agent_run

    root = Path(__file__).resolve().parents[3]
    config = yaml.safe_load((root / "examples" / "otel" / "collector.yaml").read_text())
    pipeline = config["service"]["pipelines"]["traces"]
    assert pipeline["processors"] == ["batch"] and pipeline["exporters"] == ["otlphttp/evalq"]
    assert config["processors"]["batch"]["send_batch_max_size"] <= 10_000
    exporter = config["exporters"]["otlphttp/evalq"]
    assert (exporter["encoding"], exporter["compression"]) == ("proto", "gzip")
    assert exporter["retry_on_failure"]["enabled"] is True
    variables = {"EVALQ_URL": server.url, "EVALQ_API_KEY": server.keys["write"]} | dict(os.environ)

    def expand(text: str) -> str:
        return re.sub(r"\$\{env:(\w+)\}", lambda m: variables[m.group(1)], text)

    good = two_agent_run(
        resource={
            "service.name": "behind-collector",
            "evalq.task_id": "review-1",
            "evalq.tool": "c",
        }
    )
    bad = encode_spans(two_agent_run())
    for span in bad.resource_spans[0].scope_spans[0].spans:
        span.end_time_unix_nano = 1  # 1970: every span of this trace is refused
    body = encode_spans(good)
    body.resource_spans.extend(bad.resource_spans)
    headers = {key: expand(value) for key, value in exporter["headers"].items()}
    posted = httpx.post(
        expand(exporter["traces_endpoint"]),
        content=gzip.compress(body.SerializeToString()),
        headers=headers | {"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"},
        timeout=30 * PATIENCE,
    )
    assert posted.status_code == 200, posted.text
    answer = ExportTraceServiceResponse.FromString(posted.content)
    assert answer.partial_success.rejected_spans == 9
    assert (
        "endTimeUnixNano: 1 is not a time this run can have" in answer.partial_success.error_message
    )
    result = evaluated(server, trace_id_of(good))
    assert re.fullmatch(r"[0-9a-f]{16}", str(result["metadata"].pop("span_id")))
    assert result["metadata"] == {"trace_id": trace_id_of(good), "service.name": "behind-collector"}


def test_with_a_broker_the_beat_and_a_worker_finalise_and_evaluate_a_batched_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The deployed shape: `evalq api` with a Redis broker, `evalq beat` (the trace sweep every
    0.3 s) and one `evalq worker` on the graph and merge queues, all real processes. A task
    without reference outputs needs no other tier."""
    from tests.support.processes import start, stop

    directory = tmp_path_factory.mktemp("otel-broker")
    with serve_api("sqlite", directory, extra=SETTINGS) as api:
        task = {
            "id": "graph-only",
            "category": "debugging",
            "success_criteria": [{"type": "no_errors"}],
        }
        assert api.client().put("/v1/tasks/graph-only", json=task).status_code in (200, 201)
        assert api.command is not None
        _, env, _ = api.command
        worker = start(
            ["worker", "--queues=evalq.graph,evalq.merge", "--pool=threads", "--concurrency=2"],
            env,
            directory / "worker.log",
            cwd=directory,
        )
        beat = start(
            ["beat", "--schedule", str(directory / "celerybeat-schedule")],
            env,
            directory / "beat.log",
            cwd=directory,
        )
        try:
            exporter = Counted(api)
            resource = Resource.create(
                {"service.name": "queued", "evalq.task_id": "graph-only", "evalq.tool": "sdk"}
            )
            provider = TracerProvider(resource=resource)
            provider.add_span_processor(
                BatchSpanProcessor(exporter, schedule_delay_millis=150, max_export_batch_size=3)
            )
            trace_id = agent_run(provider.get_tracer("agent"), turns=3, pause_s=0.1)
            provider.shutdown()
            assert len(exporter.exports) >= 3
            assert {result for _, result in exporter.exports} == {SpanExportResult.SUCCESS}
            result = evaluated(api, trace_id)
            trace = result["trace"]
            assert isinstance(trace, dict)
            assert (trace["spans"], trace["late_spans"], trace["service_name"]) == (8, 0, "queued")
            usage = usage_of(api, trace_id)
            assert (usage["input_tokens"], usage["tool_calls"], usage["iterations"]) == (4000, 3, 4)
        finally:
            stop(beat)
            stop(worker)
