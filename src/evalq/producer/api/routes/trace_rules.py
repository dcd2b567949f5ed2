"""A task's trace rule (online evaluation): set, read, remove, and backfill stored traces."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends

from evalq.core.trace_rules import Backfilled, TraceRule, TraceRuleOf, parse_backfill
from evalq.producer.api.auth import require
from evalq.producer.api.deps import ClientDep, JsonBody, known
from evalq.producer.api.errors import ERROR_RESPONSES
from evalq.producer.api.models import Message

router = APIRouter(prefix="/v1/tasks", tags=["trace rules"])
READ = [Depends(require("read"))]
WRITE = [Depends(require("write"))]
NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"model": Message, "description": "No such task, or no rule."},
    **ERROR_RESPONSES,
}
BODY_REFUSALS: dict[int | str, dict[str, Any]] = {
    413: {"model": Message, "description": "Body larger than EVALQ_API_MAX_BODY_BYTES."},
    415: {"model": Message, "description": "Content-Type is not application/json."},
}


def _json_body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


@router.put(
    "/{task_id}/trace-rule",
    dependencies=WRITE,
    openapi_extra=_json_body(TraceRule.model_json_schema()),
    responses={**NOT_FOUND, **BODY_REFUSALS},
)
def put_trace_rule(task_id: str, data: JsonBody, client: ClientDep) -> TraceRuleOf:
    """Create or replace the rule by which the task takes traces that name no task."""
    return client.put_trace_rule(known("task", task_id), data)


@router.get("/{task_id}/trace-rule", dependencies=READ, responses=NOT_FOUND)
def get_trace_rule(task_id: str, client: ClientDep) -> TraceRuleOf:
    """The task's trace rule."""
    return client.trace_rule(known("task", task_id))


@router.delete("/{task_id}/trace-rule", dependencies=WRITE, responses=NOT_FOUND)
def delete_trace_rule(task_id: str, client: ClientDep) -> Message:
    """Remove the task's trace rule (traces already taken stay its submissions)."""
    client.remove_trace_rule(known("task", task_id))
    return Message(detail=f"the trace rule of task {task_id!r} is removed")


@router.post(
    "/{task_id}/trace-rule/backfill",
    dependencies=WRITE,
    openapi_extra=_json_body({"$ref": "#/components/schemas/BackfillRequest"}),
    responses={**NOT_FOUND, **BODY_REFUSALS},
)
def backfill_traces(task_id: str, data: JsonBody, client: ClientDep) -> Backfilled:
    """Apply the task's rule to the stored untaken traces of a time range."""
    window = parse_backfill(data)
    return client.backfill_traces(known("task", task_id), since=window.since, until=window.until)
