"""Monitors: set (create or replace), list, read and remove them (docs/monitors.md)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query

from evalq.core.monitors import (
    NAME_PATTERN,
    PAGE_DEFAULT,
    PAGE_MAX,
    Monitor,
    MonitorList,
    MonitorRemoved,
)
from evalq.producer.api.auth import require
from evalq.producer.api.deps import ClientDep, JsonBody, known
from evalq.producer.api.errors import ERROR_RESPONSES
from evalq.producer.api.models import Message
from evalq.store.keys import ApiKey

router = APIRouter(prefix="/v1/monitors", tags=["monitors"])
READ = [Depends(require("read"))]
NOT_FOUND = {404: {"model": Message, "description": "No such monitor."}, **ERROR_RESPONSES}
Writer = Annotated[ApiKey, Depends(require("write"))]


@router.put(
    "/{name}",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/MonitorRequest"}}
            },
        }
    },
    responses={
        **ERROR_RESPONSES,
        413: {"model": Message, "description": "Body larger than EVALQ_API_MAX_BODY_BYTES."},
        415: {"model": Message, "description": "Content-Type is not application/json."},
    },
)
def put_monitor(name: str, data: JsonBody, client: ClientDep, key: Writer) -> Monitor:
    """Create or replace a monitor and check it at once: each watched task's state (``no
    data`` under ``min_n`` runs). A change of state sends ``monitor.alert`` or
    ``monitor.resolved`` to the task's webhooks, signed as every event is."""
    return client.set_monitor(name, data, created_by=key.name)


@router.get("", dependencies=READ, responses=ERROR_RESPONSES)
def list_monitors(
    client: ClientDep,
    after: Annotated[
        str | None,
        Query(
            max_length=63,
            pattern=NAME_PATTERN,
            description="List the monitors after this name (the previous page's ``next``).",
        ),
    ] = None,
    limit: Annotated[
        int, Query(ge=1, le=PAGE_MAX, description="Most monitors on the page.")
    ] = PAGE_DEFAULT,
) -> MonitorList:
    """A page of monitors by name, each with its watched tasks' states; ``next`` names the
    ``after`` of the following page."""
    return client.monitor_page(after=after, limit=limit)


@router.get("/{name}", dependencies=READ, responses=NOT_FOUND)
def get_monitor(name: str, client: ClientDep) -> Monitor:
    """One monitor with its tasks' states."""
    return client.monitor(known("monitor", name))


@router.delete("/{name}", responses=NOT_FOUND)
def remove_monitor(name: str, client: ClientDep, _: Writer) -> MonitorRemoved:
    """Remove a monitor and its states (events already stored are still delivered)."""
    client.remove_monitor(known("monitor", name))
    return MonitorRemoved(name=name)
