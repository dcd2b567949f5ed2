"""Webhooks on the wire: the registration request, the views clients get, the event envelope.

A task's webhooks are told when one of its evaluations ends (done, degraded or failed). Each
event is a Standard Webhooks message (https://www.standardwebhooks.com): a JSON envelope, signed
with the webhook's secret, under an id that stays the same on every retry of the event.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Annotated, Any, Literal
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalq.core.errors import InvalidInput
from evalq.core.schemas import Storable, problems_of

EVENT_TYPE = "evaluation.completed"
"""An evaluation ended (its ``data.status`` says how). A task's webhooks also hear of its
monitors (`evalq.core.monitors`: ``monitor.alert``, ``monitor.resolved``)."""

MAX_URL_CHARS = 2000
MAX_WEBHOOKS_PER_TASK = 20
URL_RULE = "must be an absolute http:// or https:// URL with a host and no fragment"
_PORT = (  # 1-65535
    r"(?::(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?"
)
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_USERINFO = r"(?:[A-Za-z0-9._~%!$&'()*+,;=-]+(?::[A-Za-z0-9._~%!$&'()*+,;=-]*)?@)?"
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
# A host is a dotted IPv4 address or names whose last label starts with a letter: a numeric
# last label that is not a valid address ("0.0.0.00") is one no HTTP client can send to.
_HOST = rf"(?:{_OCTET}(?:\.{_OCTET}){{3}}|(?:{_LABEL}\.)*[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?)"
URL_PATTERN = rf"^[Hh][Tt][Tt][Pp][Ss]?://{_USERINFO}{_HOST}{_PORT}" r"(?:[/?][!-\"$-~]*)?$"
"""`URL_RULE` in the OpenAPI document, a little narrower (no IPv6 literal, printable ASCII
after the host): every URL it matches is one `is_http_url` accepts (tests/unit/core)."""

DeliveryStatus = Literal["pending", "delivered", "failed"]
"""``pending``: attempts go on; ``delivered``: a 2xx answer; ``failed``: every attempt failed."""


class WebhookRequest(BaseModel):
    """The body of ``POST /v1/tasks/{task_id}/webhooks``."""

    model_config = ConfigDict(extra="forbid")

    # Storable: a NUL or a lone surrogate is refused naming the field, not a 500 on PostgreSQL
    url: Annotated[str, Storable] = Field(
        max_length=MAX_URL_CHARS,
        description="Where evalq POSTs the events: http:// or https://, a host, no fragment.",
        json_schema_extra={"pattern": URL_PATTERN},
    )
    description: Annotated[str, Storable] | None = Field(
        default=None, max_length=500, description="Free text for people (who owns the receiver)."
    )


def shown_url(url: str) -> str:
    """A receiver's URL as readers see it: credentials in its userinfo or its query hidden.

    A receiver may take a token in its URL; anyone with a read key lists webhooks, so what
    authenticates evalq to the receiver is shown as ``***`` (the full URL is kept for delivery).
    """
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rpartition("@")[2]
    query = "&".join(
        f"{name}=***" if value else name
        for name, value in parse_qsl(parts.query, keep_blank_values=True)
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


class WebhookInfo(BaseModel):
    """A registered webhook as every reader sees it: never its secret."""

    id: str = Field(description="The webhook's id (``wh_...``).")
    task_id: str
    url: str = Field(description="The receiver, its userinfo and query values shown as ***.")
    description: str | None
    created_at: datetime
    created_by: str | None = Field(description="The API key that registered it (None: local).")


class WebhookCreated(WebhookInfo):
    """The answer to a registration: the only time the signing secret is shown."""

    secret: str = Field(
        description="The signing secret (``whsec_<base64>``), shown once: verify each event's "
        "``webhook-signature`` with it (Standard Webhooks)."
    )


class AttemptRecord(BaseModel):
    """One POST of an event to its receiver."""

    attempt: int
    at: datetime
    status_code: int | None = Field(description="The receiver's HTTP status; None: no answer.")
    error: str | None = Field(description="Why the attempt failed; None when it succeeded.")
    duration_ms: float


class DeliveryInfo(BaseModel):
    """One event for one webhook and every attempt to deliver it."""

    id: str = Field(description="The event's ``webhook-id``: the same on every retry.")
    webhook_id: str
    submission_id: str | None = Field(
        description="The evaluation's run; None for a monitor's event (monitor.alert, ...)."
    )
    event: str
    status: DeliveryStatus
    attempts: int
    last_status_code: int | None
    last_error: str | None
    created_at: datetime
    updated_at: datetime
    delivered_at: datetime | None
    history: list[AttemptRecord]


class WebhookList(BaseModel):
    """A task's webhooks, oldest first."""

    webhooks: list[WebhookInfo]


class WebhookRemoved(BaseModel):
    """The answer to removing a webhook."""

    id: str
    task_id: str
    removed: Literal[True] = True


class DeliveryList(BaseModel):
    """A webhook's deliveries, newest first."""

    deliveries: list[DeliveryInfo]


def parse_webhook_request(data: Any) -> WebhookRequest:
    """A valid registration, or `InvalidInput` naming each bad field and its rule.

    The URL is checked for its form only; `evalq.core.receivers` decides about its address.
    """
    try:
        request = WebhookRequest.model_validate(data)
    except ValidationError as error:
        raise InvalidInput(problems_of(error)) from None
    if not is_http_url(request.url):
        raise InvalidInput([("url", URL_RULE)])
    return request


def is_http_url(url: str) -> bool:
    """True for an absolute http(s) URL with a host and no fragment, that httpx (which makes
    the POST) can send to."""
    try:
        parts = urlsplit(url)
        port_ok = parts.port is None or 0 < parts.port < 65536
        httpx.URL(url)
    except (ValueError, httpx.InvalidURL):  # an invalid port, IPv6 literal, IDNA name, ...
        return False
    has_space = any(c.isspace() for c in url)
    return (
        parts.scheme in ("http", "https")
        and bool(parts.hostname)
        and port_ok
        and not (parts.fragment or has_space)
    )


def message_id(webhook_id: str, submission_id: str, status: str) -> str:
    """The Standard Webhooks ``webhook-id`` of one evaluation's event for one webhook.

    Stable per (webhook, submission, outcome): every retry, a redelivered message and a merge
    run again send the same id, so a receiver that has seen it can drop the copy.
    """
    digest = hashlib.sha256(f"{webhook_id}\n{submission_id}\n{status}".encode()).hexdigest()
    return f"msg_{digest[:32]}"


def envelope(
    result: dict[str, Any], *, timestamp: datetime, event: str = EVENT_TYPE
) -> dict[str, Any]:
    """The event body: ``{"type", "timestamp", "data"}`` with ``data`` as GET /v1/submissions/ID
    answers it, or a monitor's `MonitorEvent` (``timestamp``: when the event was created, the
    same on every retry)."""
    return {"type": event, "timestamp": timestamp.isoformat(), "data": result}
