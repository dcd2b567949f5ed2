"""One OTLP request read span by span: what is kept, what is refused and why."""

from __future__ import annotations

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from evalq.traces import submissions_from_otlp
from evalq.traces.spans_in import count_spans, incoming_spans, request_of
from tests.support.otel_runs import T0, trace_id_of, two_agent_run

NOW = T0 + 3600 * 10**9


def test_spans_of_several_traces_are_kept_per_trace_and_rebuild_each_run() -> None:
    first, second = two_agent_run(), two_agent_run("openinference")
    body = encode_spans(first + second + first[:2])  # two spans sent twice in one request
    found = incoming_spans(body, now_ns=NOW)
    assert found.rejected == []
    assert {k: len(v) for k, v in found.traces.items()} == {
        trace_id_of(first): 9,
        trace_id_of(second): 9,
    }
    for spans in (first, second):
        rebuilt = request_of([s.data for s in found.traces[trace_id_of(spans)]])
        [whole] = submissions_from_otlp(rebuilt)
        [direct] = submissions_from_otlp(encode_spans(spans))
        assert whole.submission == direct.submission
        metadata = dict(whole.submission.metadata)
        assert len(metadata.pop("span_id")) == 16  # the root span's, for results out
        assert metadata == {"trace_id": trace_id_of(spans), "service.name": "reviewer"}


def test_each_bad_span_is_refused_alone_with_its_field_and_rule() -> None:
    body = ExportTraceServiceRequest()
    spans = body.resource_spans.add().scope_spans.add().spans
    good = dict(
        trace_id=b"\1" * 16,
        span_id=b"\1" * 8,
        name="ok",
        start_time_unix_nano=T0,
        end_time_unix_nano=T0 + 5,
    )
    spans.add(**good)
    spans.add(**(good | {"trace_id": b"", "span_id": b"\2" * 8, "name": "a"}))
    spans.add(**(good | {"trace_id": b"\0" * 16, "span_id": b"\3" * 8, "name": "b"}))
    spans.add(**(good | {"span_id": b"\4" * 4, "name": "c"}))
    spans.add(**(good | {"span_id": b"\5" * 8, "parent_span_id": b"\1", "name": "d"}))
    spans.add(**(good | {"span_id": b"\6" * 8, "start_time_unix_nano": 5, "name": "e"}))
    spans.add(**(good | {"span_id": b"\7" * 8, "end_time_unix_nano": NOW * 2, "name": "f"}))
    spans.add(**(good | {"span_id": b"\x08" * 8, "end_time_unix_nano": T0 - 1, "name": "g"}))
    found = incoming_spans(body, now_ns=NOW)
    assert [s.span_id for s in found.traces["01" * 16]] == ["01" * 8]
    assert found.rejected == [
        "span 0202020202020202 (a).traceId: must be 16 bytes (32 hex digits), not all zero",
        "span 0303030303030303 (b).traceId: must be 16 bytes (32 hex digits), not all zero",
        "span 04040404 (c).spanId: must be 8 bytes (16 hex digits), not all zero",
        "span 0505050505050505 (d).parentSpanId: must be empty or 8 bytes (16 hex digits)",
        "span 0606060606060606 (e).startTimeUnixNano: 5 is not a time this run can have "
        "(nanoseconds since 1970, after 2000-01-01 and at most a day ahead of the server's clock)",
        f"span 0707070707070707 (f).endTimeUnixNano: {NOW * 2} is not a time this run can have "
        "(nanoseconds since 1970, after 2000-01-01 and at most a day ahead of the server's clock)",
        f"span 0808080808080808 (g).endTimeUnixNano: ends before it starts ({T0 - 1} < {T0})",
    ]
    assert count_spans(body, stop_after=3) > 3
    assert count_spans(body, stop_after=100) == 8


def test_each_stored_span_is_the_resource_spans_protobuf_would_write_for_it() -> None:
    """The stored bytes are written from the request's (each resource and scope serialized
    once); they read back as the one-span ResourceSpans protobuf builds, schema URLs and
    lengths past one varint byte included."""
    from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans

    body = encode_spans(two_agent_run(resource={"service.name": "s" * 300, "evalq.tool": "t"}))
    body.resource_spans[0].schema_url = "https://opentelemetry.io/schemas/1.26.0"
    body.resource_spans[0].scope_spans[0].schema_url = "https://example.com/scope"
    found = incoming_spans(body, now_ns=T0)
    [(_, spans)] = found.traces.items()
    resource_spans, scope_spans = body.resource_spans[0], body.resource_spans[0].scope_spans[0]
    for stored, span in zip(spans, scope_spans.spans, strict=True):
        expected = ResourceSpans(
            resource=resource_spans.resource, schema_url=resource_spans.schema_url
        )
        expected.scope_spans.add(
            scope=scope_spans.scope, schema_url=scope_spans.schema_url
        ).spans.append(span)
        assert ResourceSpans.FromString(stored.data) == expected
        assert stored.data == expected.SerializeToString()
