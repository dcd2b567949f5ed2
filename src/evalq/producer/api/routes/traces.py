"""POST /v1/traces: OpenTelemetry traces (OTLP/HTTP) in, one submission per trace."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response

from evalq.core.errors import InvalidInput
from evalq.producer.api.auth import require
from evalq.producer.api.deps import ClientDep, OtlpBody, SettingsDep
from evalq.producer.api.errors import ERROR_RESPONSES
from evalq.producer.api.models import BatchAccepted, Message
from evalq.producer.api.routes.submissions import submit_all
from evalq.producer.client import Client
from evalq.traces import (
    ImportedTrace,
    TraceDefaults,
    submissions_from_otlp,
    unknown_task_problems,
)

router = APIRouter(prefix="/v1/traces", tags=["traces"])

OTLP_BODY = {
    "required": True,
    "description": "An OTLP ExportTraceServiceRequest, as OTLP/HTTP exporters send it "
    "(Content-Encoding gzip accepted). docs/traces.md has the mapping.",
    "content": {
        "application/x-protobuf": {"schema": {"type": "string", "format": "binary"}},
        "application/json": {"schema": {"type": "object"}},
    },
}


@router.post(
    "",
    status_code=201,
    summary="Import OpenTelemetry traces: one submission per trace",
    response_model=BatchAccepted,
    dependencies=[Depends(require("write"))],
    openapi_extra={"requestBody": OTLP_BODY},
    responses={
        200: {"model": BatchAccepted, "description": "Nothing new: every trace was known."},
        409: {"model": Message, "description": "A known submission id with different content."},
        413: {"model": Message, "description": "Body (or inflated body) too large."},
        415: {"model": Message, "description": "Not protobuf or JSON, or not gzip or plain."},
        **ERROR_RESPONSES,
    },
)
def import_traces(
    response: Response,
    body: OtlpBody,
    client: ClientDep,
    settings: SettingsDep,
    task_id: Annotated[str | None, Query(description="For traces without evalq.task_id.")] = None,
    tool: Annotated[str | None, Query(description="For traces without evalq.tool.")] = None,
    model: Annotated[str | None, Query(description="For traces without evalq.model.")] = None,
    variant: Annotated[str | None, Query(description="For traces without evalq.variant.")] = None,
) -> BatchAccepted:
    """Convert each trace of the body into a submission, then submit them all.

    A body of more than EVALQ_API_MAX_BATCH traces is a 422 before any trace is converted.
    The submissions go through the path of ``POST /v1/submissions``: all are validated
    before any is stored (a trace that cannot be mapped is a 422 naming the span and the
    attribute; an undefined task a 422 naming where its id came from), a known id with the same
    content is answered again (200 when nothing is new), a known id with other content is a
    409. A trace without ``evalq.submission_id`` gets the id ``otlp-<trace id>``, so sending
    the same trace again creates nothing.
    """
    defaults = TraceDefaults(task_id=task_id, tool=tool, model=model, variant=variant)
    traces = submissions_from_otlp(body, defaults)  # at most EVALQ_API_MAX_BATCH (`otlp_body`)
    check_tasks_exist(traces, client)
    accepted = submit_all([t.submission for t in traces], client, settings, response)
    return BatchAccepted(submissions=accepted)


def check_tasks_exist(traces: list[ImportedTrace], client: Client) -> None:
    """`InvalidInput` naming, for each trace whose task is not defined, where its id came from."""
    unknown = client.unknown_tasks(t.submission.task_id for t in traces)
    problems = unknown_task_problems(traces, unknown)
    if problems:
        raise InvalidInput(problems)
