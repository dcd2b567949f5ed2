"""OTLP trace data in: protobuf bytes or OTLP/JSON, decoded into plain `Span` values.

Parsing is the official `opentelemetry-proto` messages' own (protobuf, and protobuf's JSON
mapping). OTLP/JSON differs from that mapping in one way that matters: trace and span ids are
hex, where protobuf's JSON reads bytes as base64. Hex digits are valid base64, so parsing them
unchanged would succeed with wrong ids; they are rewritten first (`_hex_ids_to_base64`).
"""

from __future__ import annotations

import base64
import binascii
import copy
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan
from opentelemetry.proto.trace.v1.trace_pb2 import Status

from evalq.core.errors import InvalidInput
from evalq.core.storable import decode_json, printable

ID_FIELDS = {"traceId": 16, "trace_id": 16, "spanId": 8, "span_id": 8}
PARENT_FIELDS = ("parentSpanId", "parent_span_id")


@dataclass(frozen=True)
class Event:
    """A span event: its name and attributes."""

    name: str
    attributes: Mapping[str, Any]


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: one object per span
class Span:
    """One span with its resource's attributes, ids as lowercase hex (OTLP/JSON's form).

    Attributes:
        parent_id: None for a root span.
        failed: the span's status is ERROR; ``status_message`` says why, if it says.
    """

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attributes: Mapping[str, Any]
    resource: Mapping[str, Any]
    events: tuple[Event, ...]
    failed: bool
    status_message: str

    @property
    def label(self) -> str:
        """How errors name the span: its id and name (cut at 100 characters)."""
        return f"span {self.span_id} ({printable(self.name[:100])})"


def parse_protobuf(raw: bytes) -> ExportTraceServiceRequest:
    """An OTLP/HTTP protobuf body; `InvalidInput` on ``(body)`` when it is not one."""
    try:
        request: ExportTraceServiceRequest = ExportTraceServiceRequest.FromString(raw)
    except (DecodeError, RecursionError):
        rule = "not an OTLP ExportTraceServiceRequest in protobuf encoding"
        raise InvalidInput([("(body)", rule)]) from None
    return request


def parse_json(data: Any) -> ExportTraceServiceRequest:
    """A decoded OTLP/JSON body (hex ids, camelCase or snake_case keys, int64 as strings).

    Unknown fields are ignored, as the OTLP specification asks of receivers. ``data`` is left
    as it was (the ids are rewritten in a copy).
    """
    if not isinstance(data, dict):
        raise InvalidInput([("(body)", "an OTLP/JSON body is a JSON object")])
    data = copy.deepcopy(data)
    _hex_ids_to_base64(data)
    try:
        request = ExportTraceServiceRequest()
        json_format.ParseDict(data, request, ignore_unknown_fields=True)
    except (json_format.ParseError, RecursionError) as error:
        rule = f"not OTLP/JSON trace data: {printable(str(error))[:300]}"
        raise InvalidInput([("(body)", rule)]) from None
    return request


def parse_export(raw: bytes) -> ExportTraceServiceRequest:
    """An exported file: OTLP/JSON (one request, or one per line as the OpenTelemetry
    Collector's file exporter writes them) or one protobuf-encoded request.

    A file whose first non-blank byte is ``{`` is JSON; its requests are merged into one, so a
    trace whose spans were exported in several batches is whole again.
    """
    if not raw.lstrip().startswith(b"{"):
        return parse_protobuf(raw)
    try:
        return parse_json(decode_json(raw, where="(file)"))
    except InvalidInput:
        lines = [line for line in raw.split(b"\n") if line.strip()]
        if len(lines) < 2:
            raise
    merged = ExportTraceServiceRequest()
    for number, line in enumerate(lines, start=1):
        try:
            merged.resource_spans.extend(
                parse_json(decode_json(line, where="(line)")).resource_spans
            )
        except InvalidInput as error:
            raise InvalidInput([(f"line {number}", rule) for _, rule in error.problems]) from None
    return merged


def count_traces(request: ExportTraceServiceRequest | dict[str, Any], *, stop_after: int) -> int:
    """How many distinct trace ids the spans of ``request`` carry, counting no further than
    ``stop_after + 1`` (enough to tell an over-limit request, without reading all of it).

    ``request`` is a protobuf request or a decoded OTLP/JSON body (before `parse_json`, the
    costlier step: a batch limit is checked before the body is parsed, let alone converted).
    """
    seen: set[bytes | str] = set()
    for trace_id in _trace_ids(request):
        seen.add(trace_id)
        if len(seen) > stop_after:
            break
    return len(seen)


def _trace_ids(request: ExportTraceServiceRequest | dict[str, Any]) -> Iterator[bytes | str]:
    if isinstance(request, ExportTraceServiceRequest):
        for resource_spans in request.resource_spans:
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    yield span.trace_id
        return
    for resource_spans in _items(request, "resourceSpans", "resource_spans"):
        for scope_spans in _items(resource_spans, "scopeSpans", "scope_spans"):
            for span in _items(scope_spans, "spans"):
                trace_id = (
                    span.get("traceId", span.get("trace_id")) if isinstance(span, dict) else None
                )
                if isinstance(trace_id, str):  # any other value is refused by `parse_json`
                    yield trace_id.lower()


def spans_of(request: ExportTraceServiceRequest) -> Iterator[Span]:
    """Every span of ``request``, with its resource's attributes."""
    for resource_spans in request.resource_spans:
        resource = attributes_of(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                yield _span(span, resource)


def _span(span: ProtoSpan, resource: Mapping[str, Any]) -> Span:
    label = f"span {span.span_id.hex()} ({printable(span.name[:100])})"
    if len(span.trace_id) != 16:
        raise InvalidInput([(f"{label}.traceId", "must be 16 bytes (32 hex digits)")])
    if len(span.span_id) != 8:
        raise InvalidInput([(f"{label}.spanId", "must be 8 bytes (16 hex digits)")])
    if span.parent_span_id and len(span.parent_span_id) != 8:
        raise InvalidInput([(f"{label}.parentSpanId", "must be empty or 8 bytes")])
    return Span(
        trace_id=span.trace_id.hex(),
        span_id=span.span_id.hex(),
        parent_id=span.parent_span_id.hex() or None,
        name=span.name,
        start_ns=span.start_time_unix_nano,
        end_ns=span.end_time_unix_nano,
        attributes=attributes_of(span.attributes),
        resource=resource,
        events=tuple(Event(e.name, attributes_of(e.attributes)) for e in span.events),
        failed=span.status.code == Status.STATUS_CODE_ERROR,
        status_message=span.status.message,
    )


def attributes_of(pairs: Any) -> dict[str, Any]:
    """OTLP key-value pairs as a dict of plain values (the last of a repeated key wins)."""
    found: dict[str, Any] = {}
    for pair in pairs:
        assert isinstance(pair, KeyValue)
        found[pair.key] = plain(pair.value)
    return found


def plain(value: AnyValue) -> Any:
    """An OTLP ``AnyValue`` as str, bool, int, float, bytes, list or dict (None when unset)."""
    which = value.WhichOneof("value")
    if which == "array_value":
        return [plain(item) for item in value.array_value.values]
    if which == "kvlist_value":
        return attributes_of(value.kvlist_value.values)
    return None if which is None else getattr(value, which)


def _hex_ids_to_base64(data: dict[str, Any]) -> None:
    """Rewrite, in place, each span's and link's hex ids as the base64 protobuf's JSON reads."""
    for resource_spans in _items(data, "resourceSpans", "resource_spans"):
        for scope_spans in _items(resource_spans, "scopeSpans", "scope_spans"):
            for span in _items(scope_spans, "spans"):
                _rewrite_ids(span, span)
                for link in _items(span, "links"):
                    _rewrite_ids(link, span)


def _items(data: Any, *keys: str) -> list[Any]:
    if not isinstance(data, dict):
        return []
    for key in keys:
        if isinstance(data.get(key), list):
            return list(data[key])
    return []


def _rewrite_ids(holder: Any, span: dict[str, Any]) -> None:
    if not isinstance(holder, dict):
        return
    for key in (*ID_FIELDS, *PARENT_FIELDS):
        value = holder.get(key)
        if not isinstance(value, str):
            continue
        size = ID_FIELDS.get(key, 0 if value == "" else 8)
        try:
            raw = binascii.unhexlify(value)
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) != size:
            where = f"span {printable(str(span.get('spanId', span.get('span_id', '?'))))[:40]}"
            where += f" ({printable(str(span.get('name', ''))[:100])}).{key}"
            rule = f"must be {2 * size} hex digits" if size else "must be hex digits"
            raise InvalidInput([(where, rule)])
        holder[key] = base64.b64encode(raw).decode()
