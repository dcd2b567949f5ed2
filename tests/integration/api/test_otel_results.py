"""Results out: a run sent as a trace through the real OpenTelemetry SDK exporter into a real
`evalq api`, evaluated, and its evaluation received back as one ``gen_ai.evaluation.result``
event by a real OTLP/HTTP receiver on loopback, linked to the run's trace and root span."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.integration.api.conftest import Server, serve_api
from tests.support.otlp_receiver import LogsReceiver, otlp_logs_receiver
from tests.support.processes import PATIENCE, wait_until
from tests.support.reviews import review_task

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def receiver() -> Iterator[LogsReceiver]:
    with otlp_logs_receiver() as logs:
        yield logs


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, receiver: LogsReceiver) -> Iterator[Server]:
    settings = {
        "trace_quiet_s": "1",
        "trace_sweep_every_s": "0.3",
        "otel_results_endpoint": receiver.url,
    }
    directory = tmp_path_factory.mktemp("results-out")
    with serve_api("sqlite", directory, broker=False, extra=settings) as api:
        put = api.client().put("/v1/tasks/review-1", json=review_task("review-1"))
        assert put.status_code in (200, 201), put.text
        yield api


def send_run(server: Server, *, output: str) -> tuple[str, str]:
    """One agent run (a chat and a tool call) through the SDK's OTLP/HTTP span exporter;
    its trace id and root span id (hex)."""
    provider = TracerProvider(
        resource=Resource.create(
            {"service.name": "reviewer", "evalq.task_id": "review-1", "evalq.tool": "sdk"}
        )
    )
    provider.add_span_processor(
        SimpleSpanProcessor(
            OTLPSpanExporter(
                endpoint=f"{server.url}/v1/traces",
                headers={"Authorization": f"Bearer {server.keys['write']}"},
                timeout=10 * PATIENCE,  # the exporter's 10 s, retries included, on a busy API
            )
        )
    )
    tracer = provider.get_tracer("agent")
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "coder"}
    with tracer.start_as_current_span("invoke_agent coder", attributes=agent) as root:
        chat = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.usage.input_tokens": 900,
            "gen_ai.usage.output_tokens": 120,
        }
        with tracer.start_as_current_span("chat gpt-4o", attributes=chat):
            pass
        tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"}
        with tracer.start_as_current_span("execute_tool search", attributes=tool):
            pass
        root.set_attribute("evalq.output", output)
        root.set_attribute("evalq.trace.end", True)
        context = root.get_span_context()
    provider.shutdown()
    return f"{context.trace_id:032x}", f"{context.span_id:016x}"


def evaluated(server: Server, submission_id: str) -> dict[str, object]:
    client = server.client("read")

    def done() -> bool:
        answer = client.get(f"/v1/submissions/{submission_id}")
        return answer.status_code == 200 and answer.json()["status"] == "done"

    wait_until(done, timeout=180, what=f"{submission_id} to be evaluated")
    result: dict[str, object] = client.get(f"/v1/submissions/{submission_id}").json()
    return result


def test_an_evaluation_is_one_event_linked_to_the_runs_trace(
    server: Server, receiver: LogsReceiver
) -> None:
    trace_id, span_id = send_run(server, output="The parser handles ISO dates now.")
    result = evaluated(server, f"otlp-{trace_id}")
    assert result["metadata"] == {
        "trace_id": trace_id,
        "span_id": span_id,
        "service.name": "reviewer",
    }
    wait_until(
        lambda: any(e.trace_id == trace_id for e in receiver.events()),
        timeout=60,
        what="the evaluation event at the OTLP receiver",
    )
    # A second run's event arriving after the first's says the first was sent only once.
    second, _ = send_run(server, output="Dates parse.")
    evaluated(server, f"otlp-{second}")
    wait_until(
        lambda: any(e.trace_id == second for e in receiver.events()),
        timeout=60,
        what="the second run's event",
    )
    [event] = [e for e in receiver.events() if e.trace_id == trace_id]
    assert event.span_id == span_id
    assert event.resource["service.name"] == "evalq"
    attributes = event.attributes
    assert attributes["evalq.submission_id"] == f"otlp-{trace_id}"
    assert attributes["evalq.task_id"] == "review-1"
    assert attributes["evalq.evaluation.status"] == "done"
    scores = result["scores"]
    assert isinstance(scores, dict) and scores["kind"] == "peerread"
    assert attributes["gen_ai.evaluation.name"] == "evalq.peerread_composite"
    assert attributes["gen_ai.evaluation.score.value"] == pytest.approx(
        scores["peerread"]["composite"]
    )
    assert attributes["gen_ai.evaluation.score.label"] == scores["peerread"]["recommendation"]
    assert "peerread_composite" in attributes["gen_ai.evaluation.explanation"]


def test_with_a_broker_a_prefork_worker_sends_the_event_of_the_merge_it_ran(
    tmp_path_factory: pytest.TempPathFactory, receiver: LogsReceiver
) -> None:
    """The deployed shape: `evalq api` with a Redis broker, `evalq beat` (the trace sweep), and
    one prefork `evalq worker` that judges the run (the OpenAI stub) and merges it: the event
    leaves from the worker's child process, the one that ran the merge."""
    from tests.support.openai_stub import OpenAIStub
    from tests.support.processes import start, stop

    directory = tmp_path_factory.mktemp("results-out-broker")
    with OpenAIStub() as judge:
        settings = {
            "trace_quiet_s": "1",
            "trace_sweep_every_s": "0.3",
            "otel_results_endpoint": receiver.url,
            "judge_model": "openai:stub-judge",
            "judge_base_url": judge.base_url,
            "judge_api_key": "sk-test",
        }
        with serve_api("sqlite", directory, extra=settings) as api:
            # no references: tier 1 only reads the output for instructions to the judge
            task = {"id": "review-1", "category": "debugging"}
            assert api.client().put("/v1/tasks/review-1", json=task).status_code in (200, 201)
            assert api.command is not None
            _, env, _ = api.command
            worker = start(
                [
                    "worker",
                    "--queues=evalq.text,evalq.judge,evalq.graph,evalq.merge",
                    "--pool=prefork",
                    "--concurrency=1",
                ],
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
                trace_id, span_id = send_run(api, output="Fixed the date parser.")
                result = evaluated(api, f"otlp-{trace_id}")
                assert result["tiers"]["judge"]["status"] == "ok"  # type: ignore[index]
                wait_until(
                    lambda: any(e.trace_id == trace_id for e in receiver.events()),
                    timeout=120,
                    what="the worker's evaluation event at the OTLP receiver",
                )
                [event] = [e for e in receiver.events() if e.trace_id == trace_id]
                assert event.span_id == span_id
                assert event.attributes["gen_ai.evaluation.name"] == (
                    "evalq.arena_overall_unadjusted"
                )
                scores = result["scores"]
                assert isinstance(scores, dict)
                assert event.attributes["gen_ai.evaluation.score.value"] == pytest.approx(
                    scores["arena"]["unadjusted_score"]
                )
            finally:
                stop(beat)
                stop(worker)
