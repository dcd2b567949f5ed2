"""A small two-agent run traced by the real OpenTelemetry SDK, encoded as the exporters send it.

The run (times in seconds from its start), in either convention:

    workflow                                     0 .. 10   (root; evalq.* on the resource)
      agent manager                              0 .. 3
        LLM   gpt-4o   in 100 / out 20           0 .. 1
        tool  search   (context find)            1 .. 2
      agent researcher  (a handoff)              3 .. 10
        LLM   gpt-4o   in 300 / out 80           3 .. 4
        tool  read                               4 .. 6
        tool  write    (context draft)           6 .. 8
        LLM   gpt-4o   in 50 / out 40            8 .. 9.5  (says the final answer)

So: 450 input and 140 output tokens, 3 tool calls, 3 LLM calls, 10 s, one handoff
manager -> researcher, and steps search -> read -> write (the review task's reference path,
with the optimal tool in both judged contexts).
"""

from __future__ import annotations

import base64
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Literal

from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode, Tracer

Convention = Literal["genai", "openinference"]
T0 = 1_750_000_000_000_000_000
"""The run's start, in nanoseconds since the epoch."""
ANSWER = "A sparse attention method for long documents; the baselines are weak."
INPUT_TOKENS = 450
OUTPUT_TOKENS = 140
LLM_COSTS = (0.002, 0.005, 0.001)


def ns(seconds: float) -> int:
    return T0 + int(seconds * 1e9)


def two_agent_run(
    convention: Convention = "genai",
    *,
    resource: Mapping[str, Any] | None = None,
    fail_tool: bool = False,
    skip: Collection[str] = (),
    answer: str = ANSWER,
) -> list[ReadableSpan]:
    """The run's spans as the SDK records them.

    Args:
        resource: resource attributes (default: the review task's id and the tool name).
        fail_tool: the ``read`` tool span ends with an ERROR status.
        skip: attribute names left off every span (to test what a missing one does).
        answer: the final answer the researcher gives (the run's output).
    """
    exporter = InMemorySpanExporter()
    attributes = (
        {"service.name": "reviewer", "evalq.task_id": "review-1", "evalq.tool": "otel-agents"}
        if resource is None
        else dict(resource)
    )
    provider = TracerProvider(resource=Resource.create(attributes))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("evalq-tests")
    run = Run(tracer, convention, frozenset(skip), answer)
    with run.span("workflow", {}, 0, 10):
        with run.agent("manager", 0, 3):
            run.llm(0, 1, 100, 20, LLM_COSTS[0])
            run.tool("search", 1, 2, context="find")
        with run.agent("researcher", 3, 10) as researcher:
            run.llm(3, 4, 300, 80, LLM_COSTS[1])
            run.tool("read", 4, 6, failed=fail_tool)
            run.tool("write", 6, 8, context="draft")
            run.llm(8, 9.5, 50, 40, LLM_COSTS[2])
            run.answer(researcher)
    provider.shutdown()
    return list(exporter.get_finished_spans())


class Run:
    """Spans of one convention with explicit start and end times."""

    def __init__(
        self, tracer: Tracer, convention: Convention, skip: frozenset[str], answer: str = ANSWER
    ) -> None:
        self.tracer = tracer
        self.convention = convention
        self.skip = skip
        self.text = answer

    @contextmanager
    def span(
        self, name: str, attributes: dict[str, Any], start: float, end: float
    ) -> Iterator[Any]:
        kept = {k: v for k, v in attributes.items() if k not in self.skip}
        with self.tracer.start_as_current_span(
            name, attributes=kept, start_time=ns(start), end_on_exit=False
        ) as span:
            yield span
            span.end(end_time=ns(end))

    def agent(self, name: str, start: float, end: float) -> Any:
        if self.convention == "genai":
            attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}
            return self.span(f"invoke_agent {name}", attributes, start, end)
        return self.span(name, {"openinference.span.kind": "AGENT"}, start, end)

    def llm(self, start: float, end: float, tokens_in: int, tokens_out: int, cost: float) -> None:
        if self.convention == "genai":
            attributes: dict[str, Any] = {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.usage.input_tokens": tokens_in,
                "gen_ai.usage.output_tokens": tokens_out,
            }
            name = "chat gpt-4o"
        else:
            attributes = {
                "openinference.span.kind": "LLM",
                "llm.model_name": "gpt-4o",
                "llm.token_count.prompt": tokens_in,
                "llm.token_count.completion": tokens_out,
                "llm.token_count.total": tokens_in + tokens_out,
                "llm.cost.total": cost,
            }
            name = "ChatCompletion"
        with self.span(name, attributes, start, end):
            pass

    def tool(
        self,
        tool: str,
        start: float,
        end: float,
        *,
        context: str | None = None,
        failed: bool = False,
    ) -> None:
        if self.convention == "genai":
            attributes: dict[str, Any] = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": tool,
            }
            name = f"execute_tool {tool}"
        else:
            attributes = {"openinference.span.kind": "TOOL", "tool.name": tool}
            name = tool
        if context is not None:
            attributes["evalq.context"] = context
        with self.span(name, attributes, start, end) as span:
            if failed:
                span.set_status(Status(StatusCode.ERROR, "file not found"))

    def answer(self, agent_span: Any) -> None:
        if self.convention == "genai":
            messages = (
                '[{"role": "assistant", "parts": [{"type": "text", "content": "'
                + self.text
                + '"}], "finish_reason": "stop"}]'
            )
            agent_span.set_attribute("gen_ai.output.messages", messages)
        else:
            agent_span.set_attribute("output.value", self.text)


def as_protobuf(spans: list[ReadableSpan]) -> bytes:
    """The body `OTLPSpanExporter` (HTTP, protobuf) posts for these spans."""
    request: ExportTraceServiceRequest = encode_spans(spans)
    data: bytes = request.SerializeToString()
    return data


def as_otlp_json(spans: list[ReadableSpan]) -> dict[str, Any]:
    """The same request in OTLP/JSON: protobuf's JSON mapping with hex ids, enums as integers
    and int64 as strings (the OTLP specification's JSON encoding)."""
    data: dict[str, Any] = json_format.MessageToDict(
        encode_spans(spans), use_integers_for_enums=True
    )
    for resource_spans in data["resourceSpans"]:
        for scope_spans in resource_spans["scopeSpans"]:
            for span in scope_spans["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    return data


def trace_id_of(spans: list[ReadableSpan]) -> str:
    """The run's trace id as 32 hex digits."""
    return f"{spans[0].context.trace_id:032x}"
