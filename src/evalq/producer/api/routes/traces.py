"""POST /v1/traces: OpenTelemetry spans (OTLP/HTTP) in, as exporters send them.

Spans are stored per trace as they come (any batching, any order, retries stored once); the
trace sweep (`evalq.tasks.traces`) makes one submission of each trace once the run is over.
GET /v1/traces/{trace_id} says where a trace is. docs/traces.md.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import JSONResponse
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceResponse,
)
from pydantic import BaseModel, Field

from evalq.core.errors import NotFound
from evalq.producer.api.auth import require
from evalq.producer.api.body import is_protobuf
from evalq.producer.api.deps import OtlpBody, SessionDep, SettingsDep
from evalq.producer.api.errors import ERROR_RESPONSES
from evalq.producer.api.models import Message
from evalq.store import traces as stored
from evalq.store.db import session_scope
from evalq.store.keys import ApiKey
from evalq.store.models import TraceRow, TraceStatus
from evalq.traces.spans_in import incoming_spans

router = APIRouter(prefix="/v1/traces", tags=["traces"])

MAX_REASONS = 20
"""Most refusal reasons spelled out in one ``error_message`` (the rest are counted)."""

OTLP_BODY = {
    "required": True,
    "description": "An OTLP ExportTraceServiceRequest, as OTLP/HTTP exporters send it "
    "(Content-Encoding gzip accepted): any spans of any traces. docs/traces.md has the mapping.",
    "content": {
        "application/x-protobuf": {"schema": {"type": "string", "format": "binary"}},
        "application/json": {"schema": {"type": "object"}},
    },
}


class PartialSuccess(BaseModel):
    """OTLP's ``ExportTracePartialSuccess`` in its JSON form (int64 as a string)."""

    rejectedSpans: str = Field(description="How many spans of the request were refused.")
    errorMessage: str = Field(description="Why, one reason per distinct cause.")


class ExportAnswer(BaseModel):
    """OTLP's ``ExportTraceServiceResponse`` as JSON (``{}`` when every span was stored)."""

    partialSuccess: PartialSuccess | None = None


OTLP_RESPONSE: dict[str, Any] = {
    "model": ExportAnswer,
    "description": "An OTLP ExportTraceServiceResponse, in the request's encoding. "
    "partialSuccess.rejectedSpans counts the spans refused, errorMessage says why; every "
    "other span is stored.",
    "content": {"application/x-protobuf": {"schema": {"type": "string", "format": "binary"}}},
}


@router.post(
    "",
    status_code=200,
    summary="Send OpenTelemetry spans: stored per trace, one submission per finished trace",
    openapi_extra={"requestBody": OTLP_BODY},
    response_class=Response,
    responses={
        200: OTLP_RESPONSE,
        413: {"model": Message, "description": "Body (or inflated body) too large."},
        415: {"model": Message, "description": "Not protobuf or JSON, or not gzip or plain."},
        429: {
            "model": Message,
            "description": "The request would take its key past EVALQ_TRACE_MAX_OPEN_PER_KEY "
            "open traces; nothing was stored. Retry-After says when to send again.",
        },
        **ERROR_RESPONSES,
    },
)
def export_traces(
    request: Request,
    key: Annotated[ApiKey, Depends(require("write"))],  # before the body: 401 comes before 415
    body: OtlpBody,
    settings: SettingsDep,
    task_id: Annotated[str | None, Query(description="For traces without evalq.task_id.")] = None,
    tool: Annotated[str | None, Query(description="For traces without evalq.tool.")] = None,
    model: Annotated[str | None, Query(description="For traces without evalq.model.")] = None,
    variant: Annotated[str | None, Query(description="For traces without evalq.variant.")] = None,
) -> Response:
    """Store every readable span of the body under its trace; answer what was refused.

    A span is refused (and counted in ``partialSuccess``) when its ids are malformed, its times
    absurd, its trace is over EVALQ_TRACE_MAX_SPANS (then the whole trace is refused), or its
    trace was opened by another API key (a trace belongs to the key that sent its first spans); the
    other spans of the request are stored all the same, before the answer. A span already
    stored (a retried export) is not stored again. Only a body that cannot be read at all is a
    4xx, and so is a request that would open traces past the key's cap of open traces
    (429, nothing stored). The query parameters fill what a trace's own ``evalq.*``
    attributes do not give.
    """
    incoming = incoming_spans(body)
    mapping = {"task_id": task_id, "tool": tool, "model": model, "variant": variant}
    defaults = {name: value for name, value in mapping.items() if value is not None}
    reasons = list(incoming.rejected)
    try:
        with session_scope(settings.database_url) as session:
            stored_by_trace = stored.store_request(
                session,
                traces=incoming.traces,
                defaults=defaults,
                max_spans=settings.trace_max_spans,
                owner=key.name,
                rules=[ruled.rule for ruled in stored.all_rules(session)],
                max_open=settings.trace_max_open_per_key,
            )
    except stored.OpenTracesCapped as capped:
        wait = math.ceil(settings.trace_quiet_s + settings.trace_sweep_every_s)
        return JSONResponse({"detail": str(capped)}, 429, headers={"Retry-After": str(wait)})
    for outcome in stored_by_trace.values():
        reasons += outcome.rejected
    return otlp_answer(reasons, protobuf=is_protobuf(request.headers.get("content-type")))


def otlp_answer(reasons: list[str], *, protobuf: bool) -> Response:
    """The ExportTraceServiceResponse for ``reasons`` (one per refused span), encoded."""
    answer = ExportTraceServiceResponse()
    if reasons:
        distinct = list(dict.fromkeys(reasons))
        message = "; ".join(distinct[:MAX_REASONS])
        if len(distinct) > MAX_REASONS:
            message += f"; and {len(distinct) - MAX_REASONS} more reasons"
        answer.partial_success.rejected_spans = len(reasons)
        answer.partial_success.error_message = message
    if protobuf:
        return Response(answer.SerializeToString(), media_type="application/x-protobuf")
    return Response(json_format.MessageToJson(answer), media_type="application/json")


class TraceState(BaseModel):
    """Body of GET /v1/traces/{trace_id}: where a trace whose spans were sent is."""

    trace_id: str
    status: TraceStatus = Field(
        description="open: spans arriving; finalising: being made a submission; finalised; "
        "refused at the door: it can never be a run (over EVALQ_TRACE_MAX_SPANS, or more tool "
        "calls than a run's trace has edges); failed: found unable to be a submission when "
        "finalised; untaken: no rule took it. reason says why."
    )
    reason: str | None = Field(description="Why a refused or failed trace is not a run.")
    service_name: str | None
    spans: int = Field(description="Spans stored before the trace was finalised.")
    late_spans: int = Field(description="Spans that arrived after it was finalised.")
    has_root: bool
    end_marked: bool = Field(description="A span carried evalq.trace.end = true.")
    submission_id: str | None
    error: dict[str, Any] | None

    @classmethod
    def of(cls, row: TraceRow) -> TraceState:
        """The state of a stored trace."""
        return cls(
            trace_id=row.trace_id,
            status=row.status,
            service_name=row.service_name,
            spans=row.span_count,
            late_spans=row.late_spans,
            has_root=row.has_root,
            end_marked=row.end_marked,
            submission_id=row.submission_id,
            reason=stored.reason(row),
            error=row.error,
        )


@router.get(
    "/{trace_id}",
    summary="Where a trace is: its spans, and its submission once finalised",
    response_model=TraceState,
    dependencies=[Depends(require("read"))],
    responses={
        404: {"model": Message, "description": "No span of this trace was stored."},
        **ERROR_RESPONSES,
    },
)
def get_trace(trace_id: str, session: SessionDep) -> TraceState:
    """The stored trace (32 hex digits, lowercase)."""
    row = session.get(TraceRow, trace_id.lower()[:32])
    if row is None:
        raise NotFound(f"trace {trace_id!r} has no stored span")
    return TraceState.of(row)
