"""OTLP requests as they come: each span checked on its own and kept with its resource.

An exporter sends a trace in any number of requests (one span per request with
``SimpleSpanProcessor``, batches cut by a timer with ``BatchSpanProcessor``, a Collector's
batches mixing traces). `incoming_spans` reads one request into spans to store, one by one, and
the reasons for the spans it refuses; a refused span never takes its neighbours with it.
The spans of a trace are put back together, once the run is over, by `request_of`.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans
from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan

from evalq.core.storable import printable
from evalq.traces import names
from evalq.traces.otlp import attributes_of
from evalq.traces.tree import kind_of_attributes

EARLIEST_NS = 946_684_800 * 10**9
"""2000-01-01T00:00:00Z: an earlier span time is a clock that was never set (or a unit slip)."""
FUTURE_SLACK_NS = 24 * 3600 * 10**9
"""A span may end at most a day ahead of this server's clock (skewed clocks, not other units)."""


@dataclass(frozen=True)
class IncomingSpan:
    """One checked span, ready to store: its keys, its times and its bytes.

    Attributes:
        data: a serialized ``ResourceSpans`` holding the span's resource, scope and the span.
        end_marker: the span carries ``evalq.trace.end`` = true (the run says it is over).
        tool: the span is a tool call (one step of the submission's trace).
        name, attributes, resource: the span's name, its own attributes and its resource's,
            for deciding at arrival whether a task can take its trace
            (`evalq.traces.rules.may_take`).
    """

    trace_id: str
    span_id: str
    parent_id: str | None
    start_ns: int
    end_ns: int
    service_name: str | None
    end_marker: bool
    data: bytes
    tool: bool = False
    name: str = ""
    attributes: Mapping[str, object] = field(default_factory=dict)
    resource: Mapping[str, object] = field(default_factory=dict)


@dataclass
class IncomingRequest:
    """One request's spans by trace, and what was refused (a reason per refused span)."""

    traces: dict[str, list[IncomingSpan]] = field(default_factory=lambda: defaultdict(list))
    rejected: list[str] = field(default_factory=list)

    def reject(self, reasons: list[str]) -> None:
        """Count ``reasons`` (one per refused span) as refused."""
        self.rejected.extend(reasons)


def count_spans(request: ExportTraceServiceRequest, *, stop_after: int) -> int:
    """How many spans ``request`` holds; once past ``stop_after`` (counted a scope at a time)
    it stops, and the number returned only says the request holds more."""
    total = 0
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            total += len(scope_spans.spans)
            if total > stop_after:
                return total
    return total


def incoming_spans(
    request: ExportTraceServiceRequest, *, now_ns: int | None = None
) -> IncomingRequest:
    """Every span of ``request`` checked on its own: kept (by trace) or refused with a reason.

    A span is refused when its trace id is not 16 bytes (or all zero), its span id not 8 bytes
    (or all zero), its parent id neither empty nor 8 bytes, or its times are absurd: before
    2000, more than a day ahead of this server's clock, or ending before they start. A span
    sent twice in one request is kept once.
    """
    now_ns = time.time_ns() if now_ns is None else now_ns
    found = IncomingRequest()
    seen: set[tuple[str, str]] = set()
    for resource_spans in request.resource_spans:
        resource = attributes_of(resource_spans.resource.attributes)
        service = resource.get("service.name")
        resource_head = _field(1, resource_spans.resource.SerializeToString())
        resource_tail = _text_field(3, resource_spans.schema_url)
        for scope_spans in resource_spans.scope_spans:
            scope_head = _field(1, scope_spans.scope.SerializeToString())
            scope_tail = _text_field(3, scope_spans.schema_url)
            for span in scope_spans.spans:
                reason = refusal(span, now_ns)
                if reason is not None:
                    found.reject([reason])
                    continue
                key = (span.trace_id.hex(), span.span_id.hex())
                if key in seen:
                    continue
                seen.add(key)
                scoped = scope_head + _field(2, span.SerializeToString()) + scope_tail
                own = attributes_of(span.attributes)
                found.traces[key[0]].append(
                    IncomingSpan(
                        trace_id=key[0],
                        span_id=key[1],
                        parent_id=span.parent_span_id.hex() or None,
                        start_ns=span.start_time_unix_nano,
                        end_ns=span.end_time_unix_nano,
                        service_name=service if isinstance(service, str) else None,
                        end_marker=own.get(names.EVALQ_TRACE_END) is True,
                        data=resource_head + _field(2, scoped) + resource_tail,
                        tool=kind_of_attributes(own) == "tool",
                        name=span.name,
                        attributes=own,
                        resource=resource,
                    )
                )
    return found


def refusal(span: ProtoSpan, now_ns: int) -> str | None:
    """Why ``span`` cannot be stored, naming it and the field, or None when it can."""
    start, end = span.start_time_unix_nano, span.end_time_unix_nano
    if (
        len(span.trace_id) == 16
        and any(span.trace_id)
        and len(span.span_id) == 8
        and any(span.span_id)
        and len(span.parent_span_id) in (0, 8)
        and EARLIEST_NS <= start <= end <= now_ns + FUTURE_SLACK_NS
    ):
        return None  # the usual case, decided without naming the span
    label = f"span {span.span_id.hex() or '(none)'} ({printable(span.name[:100])})"
    if len(span.trace_id) != 16 or not any(span.trace_id):
        return f"{label}.traceId: must be 16 bytes (32 hex digits), not all zero"
    if len(span.span_id) != 8 or not any(span.span_id):
        return f"{label}.spanId: must be 8 bytes (16 hex digits), not all zero"
    if span.parent_span_id and len(span.parent_span_id) != 8:
        return f"{label}.parentSpanId: must be empty or 8 bytes (16 hex digits)"
    latest = now_ns + FUTURE_SLACK_NS
    for name, value in (("startTimeUnixNano", start), ("endTimeUnixNano", end)):
        if not EARLIEST_NS <= value <= latest:
            return (
                f"{label}.{name}: {value} is not a time this run can have (nanoseconds since "
                "1970, after 2000-01-01 and at most a day ahead of the server's clock)"
            )
    return f"{label}.endTimeUnixNano: ends before it starts ({end} < {start})"


def _field(number: int, payload: bytes) -> bytes:
    """One length-delimited protobuf field: its key, the payload's length (a varint), the
    payload. A ``ResourceSpans`` of one span is written from the request's bytes this way,
    each resource and scope serialized once rather than copied into a message per span."""
    size, prefix = len(payload), bytearray([number << 3 | 2])
    while size > 0x7F:
        prefix.append(size & 0x7F | 0x80)
        size >>= 7
    prefix.append(size)
    return bytes(prefix) + payload


def _text_field(number: int, text: str) -> bytes:
    """A string field, left out when empty (as protobuf writes a proto3 string)."""
    return _field(number, text.encode()) if text else b""


def request_of(stored: list[bytes]) -> ExportTraceServiceRequest:
    """The stored spans of one trace (``ResourceSpans`` bytes) as one request, to convert."""
    request = ExportTraceServiceRequest()
    for data in stored:
        request.resource_spans.append(ResourceSpans.FromString(data))
    return request
