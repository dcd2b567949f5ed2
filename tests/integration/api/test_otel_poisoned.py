"""Poisoned traces (3,000-deep JSON in ``gen_ai.output.messages`` or
``gen_ai.tool.call.arguments``) sent by the real OpenTelemetry SDK exporter with the shipped
trace settings: each ends ``failed`` with its reason, and a normal run sent after them is
evaluated, in both deployed shapes (`evalq api` alone, and with a broker, `evalq beat` and
`evalq worker`).

Before the parse was bounded, the parser's RecursionError escaped the sweep at the first
poisoned trace, every sweep: no streamed run was evaluated again (the probe's G-1).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExportResult
from opentelemetry.trace import Tracer

from tests.integration.api.conftest import Server, serve_api
from tests.integration.api.test_otel_exporter import Counted, evaluated
from tests.support.processes import start, stop, wait_until

DEEP = "[" * 3000 + "]" * 3000
TASK = {"id": "graph-only", "category": "debugging", "success_criteria": [{"type": "no_errors"}]}
CHAT = {
    "gen_ai.operation.name": "chat",
    "gen_ai.request.model": "gpt-4o",
    "gen_ai.usage.input_tokens": 1000,
    "gen_ai.usage.output_tokens": 140,
}
AGENT = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "coder"}


def run(tracer: Tracer, *, poison: str | None = None) -> str:
    """An ended run (``evalq.trace.end`` on its root): a chat and a tool call. ``poison``
    names the attribute that carries 3,000-deep JSON (``gen_ai.output.messages`` on the
    root, or ``gen_ai.tool.call.arguments`` on the tool span). Returns the trace id."""
    with tracer.start_as_current_span("invoke_agent coder", attributes=AGENT) as root:
        with tracer.start_as_current_span("chat gpt-4o", attributes=CHAT):
            pass
        tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"}
        if poison == "gen_ai.tool.call.arguments":
            tool[poison] = DEEP
        with tracer.start_as_current_span("execute_tool search", attributes=tool):
            pass
        if poison == "gen_ai.output.messages":
            root.set_attribute(poison, DEEP)
        else:
            root.set_attribute("evalq.output", "done")
        root.set_attribute("evalq.trace.end", True)
        return f"{root.get_span_context().trace_id:032x}"


@contextmanager
def exporting(server: Server) -> Iterator[tuple[Tracer, Counted]]:
    """A tracer whose spans the real OTLP/HTTP exporter sends to ``server`` in batches."""
    exporter = Counted(server)
    resource = Resource.create(
        {"service.name": "poisoned", "evalq.task_id": "graph-only", "evalq.tool": "sdk"}
    )
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=200))
    try:
        yield provider.get_tracer("agent"), exporter
    finally:
        provider.shutdown()


def poison_then_run(server: Server, count: int) -> None:
    """``count`` poisoned runs, then a normal one: the normal one is evaluated, and each
    poisoned trace is ``failed`` naming its span, the attribute and the bound."""
    assert server.client().put("/v1/tasks/graph-only", json=TASK).status_code in (200, 201)
    kinds = ("gen_ai.output.messages", "gen_ai.tool.call.arguments")
    with exporting(server) as (tracer, exporter):
        poisoned = {run(tracer, poison=kinds[n % 2]): kinds[n % 2] for n in range(count)}
        normal = run(tracer)
    assert {result for _, result in exporter.exports} == {SpanExportResult.SUCCESS}
    result = evaluated(server, normal)
    assert result["status"] == "done"
    reader = server.client("read")

    def swept() -> bool:  # the run may be done while its sweep is still on the last ones
        states = [reader.get(f"/v1/traces/{trace_id}").json() for trace_id in poisoned]
        return all(state["status"] not in ("open", "finalising") for state in states)

    wait_until(swept, timeout=120, what="every poisoned trace to be swept")
    for trace_id, attribute in poisoned.items():
        state = reader.get(f"/v1/traces/{trace_id}").json()
        assert state["status"] == "failed", state
        assert f".{attribute}: nested deeper than 32 levels" in state["reason"], state
    log = server.log.read_text(errors="replace")
    assert "RecursionError" not in log and "Traceback" not in log, log[-3000:]


def test_poisoned_traces_fail_and_a_normal_run_is_evaluated_without_a_broker(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """`evalq api` alone (its own sweep thread, in-process evaluation), shipped settings."""
    with serve_api("sqlite", tmp_path_factory.mktemp("poisoned"), broker=False) as api:
        poison_then_run(api, 100)


def test_poisoned_traces_fail_and_a_normal_run_is_evaluated_with_a_broker(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The distributed shape with the shipped settings: the beat's sweep runs on a worker."""
    directory = tmp_path_factory.mktemp("poisoned-broker")
    with serve_api("sqlite", directory) as api:
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
            poison_then_run(api, 30)
        finally:
            stop(beat)
            stop(worker)
        worker_log = Path(directory / "worker.log").read_text(errors="replace")
        assert "RecursionError" not in worker_log, worker_log[-3000:]
