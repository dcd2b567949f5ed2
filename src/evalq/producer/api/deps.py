"""Dependencies the routes share: the Client, the settings, a store session, the body, path ids."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from sqlalchemy.orm import Session

from evalq.core.errors import InvalidInput, NotFound
from evalq.core.settings import Settings
from evalq.producer.api.body import gunzip, is_json, is_protobuf, parse_json
from evalq.service.client import Client
from evalq.store.db import read_scope, session_scope
from evalq.traces import parse_json as parse_otlp_json
from evalq.traces import parse_protobuf
from evalq.traces.spans_in import count_spans

IDENTIFIER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:\-/]*")


def client_of(request: Request) -> Client:
    """The app's `Client` (one per app: one Celery producer pool)."""
    client: Client = request.app.state.client
    return client


def settings_of(request: Request) -> Settings:
    """The app's Settings."""
    settings: Settings = request.app.state.settings
    return settings


def session_of(settings: SettingsDep) -> Iterator[Session]:
    """One store session per request, in one transaction.

    Committed when the route returns, rolled back when it raises, and closed before the response
    is sent (``scope="function"`` on `SessionDep`): a client that reads right after a write sees
    it, and a failed commit is the request's error rather than a lost write after a 2xx.
    """
    with session_scope(settings.database_url) as session:
        yield session


def read_session_of(settings: SettingsDep) -> Iterator[Session]:
    """One session per request for a read that tolerates lag (boards, the task list): on the
    read replica when ``EVALQ_READ_DATABASE_URL`` is set (`evalq.store.db.read_scope`)."""
    with read_scope(settings) as session:
        yield session


async def json_body(request: Request) -> Any:
    """The request body as JSON: 415 unless it is application/json, 422 when it is not valid.

    Parsing and checking a 5 MiB body takes seconds: it runs in the thread pool, not on the
    event loop, where it held every other request (``/healthz`` took 4 s) until it was done.
    """
    if not is_json(request.headers.get("content-type")):
        raise HTTPException(415, "Content-Type must be application/json")
    return await run_in_threadpool(parse_json, await request.body())


async def otlp_body(request: Request, settings: SettingsDep) -> ExportTraceServiceRequest:
    """An OTLP/HTTP trace body, protobuf or JSON, gzip or not (as the exporters send it).

    415 for any other Content-Type or Content-Encoding; 422 on ``(body)`` when it does not
    decode or holds more than EVALQ_TRACE_MAX_REQUEST_SPANS spans. Decoding runs in the thread
    pool, as `json_body` does.
    """
    content_type = request.headers.get("content-type")
    if not (is_json(content_type) or is_protobuf(content_type)):
        raise HTTPException(415, "Content-Type must be application/x-protobuf or application/json")
    encoding = request.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("identity", "gzip"):
        raise HTTPException(415, "Content-Encoding must be gzip or none")
    raw = await request.body()

    def decode() -> ExportTraceServiceRequest:
        body = gunzip(raw, settings.api_max_body_bytes) if encoding == "gzip" else raw
        if is_protobuf(content_type):
            request = parse_protobuf(body)
        else:
            request = parse_otlp_json(parse_json(body))
        at_most_spans(request, settings.trace_max_request_spans)
        return request

    return await run_in_threadpool(decode)


def at_most_spans(request: ExportTraceServiceRequest, limit: int) -> None:
    """`InvalidInput` on ``(body)`` when the request holds more than ``limit`` spans.

    Counted before any span is read (a protobuf body within the size limit can hold a million
    empty spans).
    """
    if count_spans(request, stop_after=limit) > limit:
        rule = (
            f"holds more than {limit} spans; at most {limit} per request "
            "(EVALQ_TRACE_MAX_REQUEST_SPANS)"
        )
        raise InvalidInput([("(body)", rule)])


def known(kind: str, value: str) -> str:
    """``value`` if it can name a stored ``kind``; `NotFound` otherwise (no query is run)."""
    if len(value) > 128 or not IDENTIFIER.fullmatch(value):
        raise NotFound(f"{kind} {value!r} does not exist")
    return value


SettingsDep = Annotated[Settings, Depends(settings_of)]
ClientDep = Annotated[Client, Depends(client_of)]
SessionDep = Annotated[Session, Depends(session_of, scope="function")]
ReadSessionDep = Annotated[Session, Depends(read_session_of, scope="function")]
JsonBody = Annotated[Any, Depends(json_body)]
OtlpBody = Annotated[ExportTraceServiceRequest, Depends(otlp_body)]
