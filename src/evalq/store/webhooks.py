"""Webhooks in the store: registering, listing, removing them, and recording their deliveries.

Signing an event needs the secret itself, so unlike an API key (kept as a digest) it is kept
encrypted: a Fernet token under EVALQ_WEBHOOK_KEY. Whoever reads the table without that key
learns the receivers' URLs, never their secrets. Without a key, no webhook can be registered.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from sqlalchemy import Table, delete, select, true, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from evalq.core.errors import InvalidInput, NotConfigured, NotFound
from evalq.core.settings import Settings
from evalq.core.webhooks import (
    EVENT_TYPE,
    MAX_WEBHOOKS_PER_TASK,
    AttemptRecord,
    DeliveryInfo,
    WebhookCreated,
    WebhookInfo,
    WebhookRequest,
    message_id,
    shown_url,
)
from evalq.store.models import WebhookDeliveryRow, WebhookRow, utcnow
from evalq.store.upsert import upsert

SECRET_PREFIX = "whsec_"
NO_KEY = (
    "webhooks are not configured on this deployment: EVALQ_WEBHOOK_KEY (a Fernet key that "
    "encrypts the signing secrets) is unset"
)


def cipher(settings: Settings) -> MultiFernet:
    """The cipher of EVALQ_WEBHOOK_KEY: the first key encrypts, every key decrypts.

    Raises:
        NotConfigured: EVALQ_WEBHOOK_KEY is unset.
    """
    if settings.webhook_key is None:
        raise NotConfigured(NO_KEY)
    keys = settings.webhook_key.get_secret_value().split(",")
    return MultiFernet([Fernet(key.strip()) for key in keys])


def new_secret() -> str:
    """A Standard Webhooks signing secret: ``whsec_`` and 32 random bytes in base64."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def add_webhook(
    session: Session,
    *,
    task_id: str,
    request: WebhookRequest,
    settings: Settings,
    created_by: str | None = None,
) -> WebhookCreated:
    """Register a webhook of a stored task; the answer holds its secret, shown only here.

    Raises:
        NotConfigured: EVALQ_WEBHOOK_KEY is unset (nothing is stored).
        InvalidInput: on ``url`` when the task has `MAX_WEBHOOKS_PER_TASK` already.
    """
    box = cipher(settings)
    count = len(session.scalars(select(WebhookRow.id).where(WebhookRow.task_id == task_id)).all())
    if count >= MAX_WEBHOOKS_PER_TASK:
        raise InvalidInput([("url", f"a task has at most {MAX_WEBHOOKS_PER_TASK} webhooks")])
    secret = new_secret()
    row = WebhookRow(
        id=f"wh_{secrets.token_hex(8)}",
        task_id=task_id,
        url=request.url,
        description=request.description,
        secret_encrypted=box.encrypt(secret.encode()).decode(),
        created_by=created_by,
        created_at=utcnow(),
    )
    session.add(row)
    session.flush()
    return WebhookCreated(**info(row).model_dump(), secret=secret)


def info(row: WebhookRow) -> WebhookInfo:
    """The public view of a webhook (no secret, encrypted or not)."""
    return WebhookInfo(
        id=row.id,
        task_id=row.task_id,
        url=shown_url(row.url),
        description=row.description,
        created_at=as_utc(row.created_at),
        created_by=row.created_by,
    )


def as_utc(moment: datetime) -> datetime:
    """``moment`` with its time zone: SQLite gives back the UTC times it stored without one."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def list_webhooks(session: Session, *, task_id: str) -> list[WebhookInfo]:
    """The task's webhooks, oldest first."""
    rows = session.scalars(
        select(WebhookRow).where(WebhookRow.task_id == task_id).order_by(WebhookRow.created_at)
    )
    return [info(row) for row in rows]


def webhook_ids(session: Session, *, task_id: str) -> list[str]:
    """Ids of the task's webhooks (what the merge sends an event to)."""
    return list(session.scalars(select(WebhookRow.id).where(WebhookRow.task_id == task_id)))


def webhooks_of(session: Session, *, task_ids: Collection[str]) -> dict[str, list[str]]:
    """Each of ``task_ids`` with the ids of its webhooks (none: an empty list), in one read."""
    found: dict[str, list[str]] = {task_id: [] for task_id in task_ids}
    query = select(WebhookRow.task_id, WebhookRow.id).where(WebhookRow.task_id.in_(found))
    for task_id, webhook_id in session.execute(query.order_by(WebhookRow.created_at)):
        found[task_id].append(webhook_id)
    return found


def get_webhook(session: Session, *, task_id: str, webhook_id: str) -> WebhookRow:
    """The task's webhook; `NotFound` when the task has no webhook of that id."""
    row = session.get(WebhookRow, webhook_id)
    if row is None or row.task_id != task_id:
        raise NotFound(f"task {task_id!r} has no webhook {webhook_id!r}")
    return row


def remove_webhook(session: Session, *, task_id: str, webhook_id: str) -> None:
    """Remove a webhook, its encrypted secret and its delivery records; `NotFound` if unknown.

    A delivery still retrying finds its webhook gone and stops.
    """
    get_webhook(session, task_id=task_id, webhook_id=webhook_id)
    session.execute(delete(WebhookDeliveryRow).where(WebhookDeliveryRow.webhook_id == webhook_id))
    session.execute(delete(WebhookRow).where(WebhookRow.id == webhook_id))


def deliveries(
    session: Session, *, task_id: str, webhook_id: str, limit: int = 100
) -> list[DeliveryInfo]:
    """The webhook's deliveries, newest first, each with its attempts."""
    get_webhook(session, task_id=task_id, webhook_id=webhook_id)
    rows = session.scalars(
        select(WebhookDeliveryRow)
        .where(WebhookDeliveryRow.webhook_id == webhook_id)
        .order_by(WebhookDeliveryRow.created_at.desc(), WebhookDeliveryRow.id)
        .limit(limit)
    )
    return [delivery_info(row) for row in rows]


def delivery_info(row: WebhookDeliveryRow) -> DeliveryInfo:
    """The public view of a delivery."""
    return DeliveryInfo(
        id=row.id,
        webhook_id=row.webhook_id,
        submission_id=row.submission_id,
        event=row.event,
        status=row.status,  # written only as a DeliveryStatus; pydantic checks it
        attempts=row.attempts,
        last_status_code=row.last_status_code,
        last_error=row.last_error,
        created_at=as_utc(row.created_at),
        updated_at=as_utc(row.updated_at),
        delivered_at=None if row.delivered_at is None else as_utc(row.delivered_at),
        history=[AttemptRecord.model_validate(item) for item in row.history],
    )


def pending_event(
    event_id: str, webhook_id: str, submission_id: str, *, now: datetime, due_at: datetime
) -> dict[str, object]:
    """A new `evaluation.completed` delivery row, pending, sent (again) from ``due_at``."""
    return {
        "id": event_id,
        "webhook_id": webhook_id,
        "submission_id": submission_id,
        "event": EVENT_TYPE,
        "status": "pending",
        "attempts": 0,
        "history": [],
        "created_at": now,
        "updated_at": now,
        "due_at": due_at,
    }


@dataclass(frozen=True)
class Delivery:
    """What one attempt needs: where to, the secret to sign with, the event's stable id."""

    id: str
    url: str
    secret: str = field(repr=False)  # a repr may reach a log
    attempts: int
    created_at: datetime


def claim_delivery(
    session: Session, *, webhook_id: str, submission_id: str, status: str, settings: Settings
) -> Delivery | None:
    """The event's delivery, created on first use; None when there is nothing left to send.

    Nothing is left when the webhook was removed or the event was delivered or given up on
    (a redelivered message, or a merge run again with the same outcome).
    """
    webhook = session.get(WebhookRow, webhook_id)
    if webhook is None:
        return None
    event_id = message_id(webhook_id, submission_id, status)
    now = utcnow()
    upsert(
        session,
        WebhookDeliveryRow.__table__,  # type: ignore[arg-type]
        values=pending_event(event_id, webhook_id, submission_id, now=now, due_at=now),
        keys=["id"],
        update={"id": event_id},  # keep the row as it is
    )
    row = session.get(WebhookDeliveryRow, event_id, populate_existing=True)
    if row is None or row.status != "pending":
        return None
    secret = _secret(webhook, settings)
    return Delivery(event_id, webhook.url, secret, row.attempts, as_utc(row.created_at))


def _secret(webhook: WebhookRow, settings: Settings) -> str:
    try:
        return cipher(settings).decrypt(webhook.secret_encrypted.encode()).decode()
    except InvalidToken:
        raise NotConfigured(
            "EVALQ_WEBHOOK_KEY does not decrypt this webhook's secret (was the key replaced "
            "rather than rotated? keep the old key after the new one)"
        ) from None


def record_attempt(
    session: Session,
    *,
    delivery_id: str,
    attempt: AttemptRecord,
    give_up: bool,
    due_at: datetime | None = None,
) -> None:
    """Store one attempt's outcome; the delivery is ``delivered`` on success, ``failed`` when
    ``give_up``, ``pending`` otherwise, due again at ``due_at`` (when the event sweep sends it
    should its retry never come). A delivery removed meanwhile (its webhook was) is left
    alone."""
    row = session.get(WebhookDeliveryRow, delivery_id, with_for_update=True)
    if row is None:
        return
    ok = attempt.error is None
    row.attempts = max(row.attempts, attempt.attempt)
    row.last_status_code = attempt.status_code
    row.last_error = None if ok else (attempt.error or "")[:500]
    row.history = [*row.history, attempt.model_dump(mode="json")]
    row.status = "delivered" if ok else ("failed" if give_up else "pending")
    row.due_at = due_at if row.status == "pending" else None
    if ok:
        row.delivered_at = attempt.at


def add_event(
    session: Session,
    *,
    webhook_id: str,
    event_id: str,
    event: str,
    payload: dict[str, object],
    settings: Settings,
) -> None:
    """Store a pending delivery of an event whose body is ``payload`` (a monitor's: it names no
    submission), in the transaction that decided it; an event stored already is left alone.
    The caller sends it once committed; the event sweep does if that message never comes."""
    now = utcnow()
    upsert(
        session,
        WebhookDeliveryRow.__table__,  # type: ignore[arg-type]
        values={
            "id": event_id,
            "webhook_id": webhook_id,
            "submission_id": None,
            "event": event,
            "payload": payload,
            "status": "pending",
            "attempts": 0,
            "history": [],
            "created_at": now,
            "updated_at": now,
            "due_at": now + timedelta(seconds=settings.event_resend_after_s),
        },
        keys=["id"],
        update={"id": event_id},
    )


@dataclass(frozen=True)
class Event:
    """A stored event still to send: its delivery, its type, and what its body is made of: a
    fixed ``payload`` (a monitor's), or the result of ``submission_id`` read when it is sent
    (an evaluation's: GET /v1/submissions/ID as it answers then)."""

    delivery: Delivery
    event: str
    payload: dict[str, object] | None
    submission_id: str | None


def claim_event(session: Session, *, delivery_id: str, settings: Settings) -> Event | None:
    """The stored event ``delivery_id`` if it is still to send (None: delivered, given up on,
    or its webhook removed)."""
    row = session.get(WebhookDeliveryRow, delivery_id, populate_existing=True)
    if row is None or row.status != "pending":
        return None
    if row.payload is None and row.submission_id is None:
        return None
    webhook = session.get(WebhookRow, row.webhook_id)
    if webhook is None:
        return None
    secret = _secret(webhook, settings)
    delivery = Delivery(row.id, webhook.url, secret, row.attempts, as_utc(row.created_at))
    payload = None if row.payload is None else dict(row.payload)
    return Event(delivery, row.event, payload, row.submission_id)


def add_evaluation_events(
    session: Session,
    *,
    events: Sequence[tuple[str, str, str]],
    settings: Settings,
) -> list[str]:
    """Store a pending delivery of each evaluation's event, given as (webhook id, submission
    id, status), in the merge's transaction (one statement); the ids to send once committed.

    An event stored already (a merge run again with the same outcome) is left as it is.
    """
    if not events:
        return []
    now = utcnow()
    due = now + timedelta(seconds=settings.event_resend_after_s)
    ids = [
        message_id(webhook_id, submission_id, status)
        for webhook_id, submission_id, status in events
    ]
    rows = [
        pending_event(event_id, webhook_id, submission_id, now=now, due_at=due)
        for event_id, (webhook_id, submission_id, _) in zip(ids, events, strict=True)
    ]
    _insert_new(session, WebhookDeliveryRow.__table__, rows)  # type: ignore[arg-type]
    return ids


def _insert_new(session: Session, table: Table, rows: list[dict[str, object]]) -> None:
    """INSERT ``rows``, leaving any whose key is stored already as it is."""
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        session.execute(postgresql.insert(table).values(rows).on_conflict_do_nothing())
    else:
        session.execute(sqlite.insert(table).values(rows).on_conflict_do_nothing())


def due_events(
    session: Session,
    *,
    now: datetime,
    settings: Settings,
    every_pending: bool = False,
    limit: int = 1000,
) -> list[str]:
    """The pending events due to be sent again (their message never came, or was lost; with
    ``every_pending``, all of them), oldest due first; each is due again
    EVALQ_EVENT_RESEND_AFTER_S from ``now``.

    Rows another sweep is taking at the same moment are skipped (PostgreSQL), so two sweeps
    never send the same event twice at once.
    """
    query = (
        select(WebhookDeliveryRow.id)
        .where(
            WebhookDeliveryRow.status == "pending",
            true() if every_pending else WebhookDeliveryRow.due_at <= now,
        )
        .order_by(WebhookDeliveryRow.due_at, WebhookDeliveryRow.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    ids = list(session.scalars(query))
    if ids:
        session.execute(
            update(WebhookDeliveryRow)
            .where(WebhookDeliveryRow.id.in_(ids))
            .values(due_at=now + timedelta(seconds=settings.event_resend_after_s))
        )
    return ids
