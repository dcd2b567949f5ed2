"""OTLP trace data from the real OpenTelemetry SDK -> submissions, in both conventions."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evalq.core.errors import InvalidInput
from evalq.core.schemas import Submission
from evalq.traces import (
    TraceDefaults,
    parse_export,
    parse_json,
    parse_protobuf,
    submissions_from_otlp,
)
from tests.support.otel_runs import (
    ANSWER,
    INPUT_TOKENS,
    LLM_COSTS,
    OUTPUT_TOKENS,
    Run,
    as_otlp_json,
    as_protobuf,
    ns,
    trace_id_of,
    two_agent_run,
)

CONVENTIONS = ("genai", "openinference")


def convert(spans: Any, defaults: TraceDefaults | None = None) -> Submission:
    """The one submission of a run, through the protobuf body."""
    (imported,) = submissions_from_otlp(parse_protobuf(as_protobuf(spans)), defaults)
    return imported.submission


def problems(data: dict[str, Any], defaults: TraceDefaults | None = None) -> list[tuple[str, str]]:
    """The problems an OTLP/JSON body is refused with."""
    with pytest.raises(InvalidInput) as caught:
        submissions_from_otlp(parse_json(data), defaults)
    return caught.value.problems


def json_spans(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        span
        for resource in data["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]


def span_named(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(span for span in json_spans(data) if span["name"] == name)


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_a_two_agent_run_becomes_one_submission(convention: Any) -> None:
    spans = two_agent_run(convention)
    submission = convert(spans)
    assert submission.id == f"otlp-{trace_id_of(spans)}"
    assert (submission.task_id, submission.tool, submission.model) == (
        "review-1",
        "otel-agents",
        "gpt-4o",
    )
    usage = submission.usage
    assert (usage.input_tokens, usage.output_tokens) == (INPUT_TOKENS, OUTPUT_TOKENS)
    assert usage.total_tokens == INPUT_TOKENS + OUTPUT_TOKENS
    assert (usage.tool_calls, usage.iterations, usage.execution_time) == (3, 3, 10.0)
    assert submission.output == ANSWER
    assert submission.trace is not None
    steps = [(s.tool, s.agent, s.context, s.started_at, s.ended_at) for s in submission.trace.steps]
    assert steps == [
        ("search", "manager", "find", 1.0, 2.0),
        ("read", "researcher", None, 4.0, 6.0),
        ("write", "researcher", "draft", 6.0, 8.0),
    ]
    messages = [(m.sender, m.receiver, m.type) for m in submission.trace.messages]
    assert messages == [("manager", "researcher", "handoff")]
    assert submission.evidence.success and submission.evidence.errors == []


def test_cost_is_summed_from_openinference_llm_spans_and_absent_in_genai() -> None:
    assert convert(two_agent_run("openinference")).usage.cost_usd == pytest.approx(sum(LLM_COSTS))
    assert convert(two_agent_run("genai")).usage.cost_usd is None  # priced from the profile


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_otlp_json_and_protobuf_give_the_same_submission(convention: Any) -> None:
    spans = two_agent_run(convention)
    wire = json.loads(json.dumps(as_otlp_json(spans)))  # as sent: ids hex, int64 as strings
    assert isinstance(json_spans(wire)[0]["startTimeUnixNano"], str)
    (from_json,) = submissions_from_otlp(parse_json(wire))
    assert from_json.submission == convert(spans)


def test_a_file_of_json_lines_is_merged_so_a_trace_split_over_batches_is_whole() -> None:
    spans = two_agent_run()
    first, second = as_otlp_json(spans[:4]), as_otlp_json(spans[4:])
    lines = (json.dumps(first) + "\n\n" + json.dumps(second) + "\n").encode()
    (imported,) = submissions_from_otlp(parse_export(lines))
    assert imported.submission == convert(spans)
    (from_protobuf,) = submissions_from_otlp(parse_export(as_protobuf(spans)))
    assert from_protobuf.submission == convert(spans)


def test_importing_the_same_trace_twice_gives_the_same_id() -> None:
    spans = two_agent_run()
    assert convert(spans).id == convert(spans).id
    assert convert(spans).content_hash() == convert(spans).content_hash()


def test_evalq_attributes_win_over_the_request_mapping() -> None:
    resource = {
        "evalq.task_id": "review-1",
        "evalq.tool": "otel-agents",
        "evalq.model": "gpt-4o-2024",
        "evalq.variant": "T1",
        "evalq.run_index": 2,
        "evalq.submission_id": "run-7",
    }
    defaults = TraceDefaults(task_id="other", tool="x", model="y", variant="T0")
    submission = convert(two_agent_run(resource=resource), defaults)
    assert (submission.id, submission.task_id, submission.tool) == (
        "run-7",
        "review-1",
        "otel-agents",
    )
    assert (submission.model, submission.variant, submission.run_index) == ("gpt-4o-2024", "T1", 2)


def test_the_request_mapping_fills_what_the_trace_lacks() -> None:
    defaults = TraceDefaults(task_id="review-1", tool="my-agents", variant="T0")
    submission = convert(two_agent_run(resource={"service.name": "x"}), defaults)
    assert (submission.task_id, submission.tool, submission.variant) == (
        "review-1",
        "my-agents",
        "T0",
    )
    assert submission.model == "gpt-4o"  # from the first LLM span's gen_ai.request.model


def test_a_failed_span_is_an_error_of_the_evidence() -> None:
    submission = convert(two_agent_run(fail_tool=True))
    assert submission.evidence.errors == ["execute_tool read: file not found"]
    assert submission.evidence.success  # the run as a whole (the root span) did not fail


def test_an_agent_inside_another_is_a_request_and_a_delivery() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    run = Run(provider.get_tracer("t"), "genai", frozenset())
    with run.agent("manager", 0, 5):
        run.llm(0, 1, 10, 5, 0.0)
        with run.agent("researcher", 1, 4):
            run.tool("read", 2, 3)
        run.tool("write", 4, 5)
    provider.shutdown()
    spans = list(exporter.get_finished_spans())
    submission = convert(spans, TraceDefaults(task_id="t", tool="a"))
    assert submission.trace is not None
    assert [(m.sender, m.receiver, m.type) for m in submission.trace.messages] == [
        ("manager", "researcher", "task_request"),
        ("researcher", "manager", "result_delivery"),
    ]
    assert [(s.tool, s.agent) for s in submission.trace.steps] == [
        ("read", "researcher"),
        ("write", "manager"),
    ]
    assert submission.usage.execution_time == 5.0 and ns(0) > 0


# --- what cannot be mapped: 422s naming the span and the attribute ---------------------------


def test_a_missing_task_id_names_the_root_span_and_the_attribute() -> None:
    data = as_otlp_json(two_agent_run(resource={"evalq.tool": "a"}))
    root = span_named(data, "workflow")
    [(field, rule)] = problems(data)
    assert field == f"span {root['spanId']} (workflow).evalq.task_id"
    assert "give task_id with the request" in rule


@pytest.mark.parametrize(
    ("convention", "skipped", "span_name"),
    [
        ("genai", "gen_ai.usage.output_tokens", "chat gpt-4o"),
        ("openinference", "llm.token_count.completion", "ChatCompletion"),
        ("genai", "gen_ai.tool.name", "execute_tool search"),
        ("openinference", "tool.name", "search"),
        ("genai", "gen_ai.agent.name", "invoke_agent manager"),
    ],
)
def test_a_missing_attribute_names_the_span_and_the_attribute(
    convention: Any, skipped: str, span_name: str
) -> None:
    # with only llm.token_count.total an OpenInference span still counts: drop it too
    data = as_otlp_json(two_agent_run(convention, skip={skipped, "llm.token_count.total"}))
    span = span_named(data, span_name)
    [(field, rule)] = problems(data)
    assert field == f"span {span['spanId']} ({span_name}).{skipped}"
    assert rule.startswith("missing")


def test_tokens_that_are_not_integers_name_the_span_and_the_attribute() -> None:
    data = as_otlp_json(two_agent_run())
    span = span_named(data, "chat gpt-4o")
    for attribute in span["attributes"]:
        if attribute["key"] == "gen_ai.usage.input_tokens":
            attribute["value"] = {"stringValue": "100"}
    [(field, rule)] = problems(data)
    assert field == f"span {span['spanId']} (chat gpt-4o).gen_ai.usage.input_tokens"
    assert rule.startswith("must be a non-negative integer")


def test_a_cost_on_some_llm_spans_only_names_a_span_without_one() -> None:
    data = as_otlp_json(two_agent_run("openinference"))
    last = [s for s in json_spans(data) if s["name"] == "ChatCompletion"][-1]
    last["attributes"] = [a for a in last["attributes"] if a["key"] != "llm.cost.total"]
    [(field, _)] = problems(data)
    assert field == f"span {last['spanId']} (ChatCompletion).llm.cost.total"


def test_an_invalid_value_is_named_by_the_attribute_it_came_from() -> None:
    data = as_otlp_json(two_agent_run(resource={"evalq.task_id": "a/b", "evalq.tool": "x"}))
    root = span_named(data, "workflow")
    [(field, rule)] = problems(data)
    assert field == f"span {root['spanId']} (workflow).resource.evalq.task_id"
    assert rule == "Value error, a task id must not contain '/'"


def test_a_trace_without_its_root_span_is_refused_whole() -> None:
    data = as_otlp_json(two_agent_run())
    for resource in data["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            scope["spans"] = [s for s in scope["spans"] if s["name"] != "workflow"]
    trace_id = json_spans(data)[0]["traceId"]
    [(field, rule)] = problems(data)
    assert field == f"trace {trace_id}"
    assert "send" in rule and "in one request" in rule


def test_ids_that_are_not_hex_name_the_span() -> None:
    data = as_otlp_json(two_agent_run())
    span = span_named(data, "chat gpt-4o")
    span["traceId"] = "zz" * 16
    [(field, rule)] = problems(data)
    assert field == f"span {span['spanId']} (chat gpt-4o).traceId"
    assert rule == "must be 32 hex digits"


def test_bodies_that_are_not_otlp_are_refused_on_the_body() -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_protobuf(b"\xff\xff\xff not protobuf")
    assert caught.value.problems[0][0] == "(body)"
    assert problems({"resourceSpans": []}) == [("(body)", "holds no spans")]
    with pytest.raises(InvalidInput) as caught:
        parse_json({"resourceSpans": "no"})
    assert caught.value.problems[0][0] == "(body)"


def test_parse_json_leaves_its_input_as_it_was() -> None:
    data = as_otlp_json(two_agent_run())
    before = json.dumps(data)
    parse_json(data)
    assert json.dumps(data) == before


def test_a_step_value_the_store_cannot_keep_names_the_tool_span_attribute() -> None:
    data = as_otlp_json(two_agent_run())
    span = span_named(data, "execute_tool search")
    for attribute in span["attributes"]:
        if attribute["key"] == "gen_ai.tool.name":
            attribute["value"] = {"stringValue": "sea\u0000rch"}
    [(field, rule)] = problems(data)
    assert field == f"span {span['spanId']} (execute_tool search).gen_ai.tool.name"
    assert rule == "string must not contain NUL characters"


def test_an_output_recorded_on_the_last_model_call_only_is_the_output() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("t")
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
    tokens = {"gen_ai.usage.input_tokens": 5, "gen_ai.usage.output_tokens": 1}
    with tracer.start_as_current_span(
        "invoke_agent solo",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "solo"},
    ):
        for text in ("draft", "final"):
            with tracer.start_as_current_span("chat m", attributes=chat | tokens) as span:
                message = {"role": "assistant", "parts": [{"type": "text", "content": text}]}
                span.set_attribute("gen_ai.output.messages", json.dumps([message]))
    provider.shutdown()
    submission = convert(list(exporter.get_finished_spans()), TraceDefaults(task_id="t", tool="a"))
    assert submission.output == "final"


def test_a_submission_id_with_a_slash_is_named_by_the_attribute_it_came_from() -> None:
    resource = {"evalq.task_id": "t", "evalq.tool": "x", "evalq.submission_id": "a/../b"}
    data = as_otlp_json(two_agent_run(resource=resource))
    root = span_named(data, "workflow")
    [(field, rule)] = problems(data)
    assert field == f"span {root['spanId']} (workflow).resource.evalq.submission_id"
    assert rule == "Value error, a submission id must not contain '/'"
