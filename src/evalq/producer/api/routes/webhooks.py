"""A task's webhooks: register (the secret is shown once), list, remove, and read deliveries."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query

from evalq.core.webhooks import DeliveryList, WebhookCreated, WebhookList, WebhookRemoved
from evalq.producer.api.auth import require
from evalq.producer.api.deps import ClientDep, JsonBody, known
from evalq.producer.api.errors import ERROR_RESPONSES
from evalq.producer.api.models import Message
from evalq.store.keys import ApiKey

router = APIRouter(prefix="/v1/tasks", tags=["webhooks"])
READ = [Depends(require("read"))]
NOT_FOUND = {404: {"model": Message, "description": "No such task or webhook."}, **ERROR_RESPONSES}
Writer = Annotated[ApiKey, Depends(require("write"))]


@router.post(
    "/{task_id}/webhooks",
    status_code=201,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/WebhookRequest"}}
            },
        }
    },
    responses={
        **NOT_FOUND,
        413: {"model": Message, "description": "Body larger than EVALQ_API_MAX_BODY_BYTES."},
        415: {"model": Message, "description": "Content-Type is not application/json."},
        503: {"model": Message, "description": "EVALQ_WEBHOOK_KEY is not configured."},
    },
)
def add_webhook(task_id: str, data: JsonBody, client: ClientDep, key: Writer) -> WebhookCreated:
    """Register a receiver of the task's evaluation events (done, degraded, failed).

    The answer carries the signing secret (``whsec_...``): it is shown this once and never
    again. Each event is POSTed signed per Standard Webhooks (``webhook-id``,
    ``webhook-timestamp``, ``webhook-signature``). The URL must be http:// or https://, and
    (unless EVALQ_WEBHOOK_ALLOW_PRIVATE is set) its host must resolve to public addresses only:
    private, loopback, link-local and other non-global receivers get a 422 on ``url``.
    """
    return client.add_webhook(known("task", task_id), data, created_by=key.name)


@router.get("/{task_id}/webhooks", dependencies=READ, responses=NOT_FOUND)
def list_webhooks(task_id: str, client: ClientDep) -> WebhookList:
    """The task's webhooks, oldest first (never their secrets)."""
    return WebhookList(webhooks=client.webhooks(known("task", task_id)))


@router.delete("/{task_id}/webhooks/{webhook_id}", responses=NOT_FOUND)
def remove_webhook(task_id: str, webhook_id: str, client: ClientDep, _: Writer) -> WebhookRemoved:
    """Remove a webhook with its secret and delivery records; retries under way stop."""
    client.remove_webhook(known("task", task_id), known("webhook", webhook_id))
    return WebhookRemoved(id=webhook_id, task_id=task_id)


@router.get("/{task_id}/webhooks/{webhook_id}/deliveries", dependencies=READ, responses=NOT_FOUND)
def list_deliveries(
    task_id: str,
    webhook_id: str,
    client: ClientDep,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> DeliveryList:
    """The webhook's deliveries, newest first: status, attempts, last status code or error,
    and every attempt with its time."""
    found = client.webhook_deliveries(
        known("task", task_id), known("webhook", webhook_id), limit=limit
    )
    return DeliveryList(deliveries=found)
