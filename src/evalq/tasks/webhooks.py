"""Webhook delivery: POST a stored event to its receiver, signed, with bounded retries.

Every event is stored before it is sent, in the transaction that decided it (the merge, a
monitor's check): the delivery rows are the events' outbox. Once that transaction commits,
its caller sends one `deliver_event` per row (`send_events`) and never waits for it; should a
message be lost (the broker down at that moment, a store restart under the worker), the event
sweep (`resend_events`, on the beat) sends it again once it is due: an event is delayed,
never dropped. A slow or dead receiver only ever affects its own delivery rows. Attempts are
counted in the store, so a redelivered message counts against EVALQ_WEBHOOK_MAX_ATTEMPTS too.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from celery import Celery, current_app, shared_task
from celery import Task as CeleryTask
from standardwebhooks import Webhook

from evalq import __version__
from evalq.core.errors import InvalidInput
from evalq.core.receivers import PRIVATE_RULE, receiver_addresses
from evalq.core.redact import redact, redact_url
from evalq.core.settings import Settings, get_settings
from evalq.core.webhooks import AttemptRecord, envelope
from evalq.read.submission import submission_result
from evalq.store import webhooks
from evalq.store.db import session_scope
from evalq.store.models import utcnow
from evalq.tasks.bounded_post import POST_ERRORS, post_pinned
from evalq.workers.names import EVENT_SWEEP_TASK, EVENT_TASK, ROUTES, WEBHOOK_TASK
from evalq.workers.policy import (
    TRANSIENT_DB_ERRORS,
    WEBHOOK_MAX_RETRIES,
    webhook_countdown,
    webhook_time_limit,
)

log = logging.getLogger(__name__)
REFUSED = f"url: {PRIVATE_RULE}"
"""The error of an attempt the address rule refused (no connection was made)."""


def send_events(app: Celery, delivery_ids: Sequence[str]) -> int:
    """Send one `deliver_event` per stored event; how many messages were sent.

    Called once the transaction that stored the events has committed. Whatever goes wrong is
    logged in one line and swallowed: the events wait in the store, and the event sweep sends
    them once they are due (EVALQ_EVENT_RESEND_AFTER_S).
    """
    sent = 0
    try:
        for delivery_id in delivery_ids:
            app.send_task(EVENT_TASK, args=[delivery_id], queue=ROUTES[EVENT_TASK]["queue"])
            sent += 1
    except Exception as error:  # the broker is down: not a bug of ours
        log.warning(
            "could not send %d webhook event(s) now (%s); the event sweep sends them later",
            len(delivery_ids) - sent,
            type(error).__name__,
        )
    return sent


def resend_events(
    app: Celery, *, now: datetime | None = None, every_pending: bool = False
) -> list[str]:
    """The event sweep: send again every pending event that is due (its message never came,
    or was lost; with ``every_pending``, all of them: a process whose in-memory queue died
    with it); their ids. Each is due again EVALQ_EVENT_RESEND_AFTER_S later."""
    settings = get_settings()
    with session_scope() as session:
        due = webhooks.due_events(
            session, now=now or utcnow(), settings=settings, every_pending=every_pending
        )
    if due:
        log.info("the event sweep sends %d pending webhook event(s) again", len(due))
        send_events(app, due)
    return due


@shared_task(name=EVENT_SWEEP_TASK, autoretry_for=TRANSIENT_DB_ERRORS, retry_backoff=True)
def resend_due_events() -> int:
    """Beat entry: the event sweep (`resend_events`); how many events it sent again."""
    return len(resend_events(current_app))


@shared_task(
    bind=True,
    name=EVENT_TASK,
    autoretry_for=TRANSIENT_DB_ERRORS,  # the store restarted: try again
    retry_backoff=True,
    max_retries=WEBHOOK_MAX_RETRIES,
)
def deliver_event(self: CeleryTask, delivery_id: str) -> dict[str, str]:
    """Deliver one stored event (an evaluation's or a monitor's) to its webhook, retrying a
    failed POST with backoff.

    A 2xx answer delivers it; anything else (an error status, no answer within
    EVALQ_WEBHOOK_TIMEOUT_S) is retried until EVALQ_WEBHOOK_MAX_ATTEMPTS attempts were made.
    A receiver the address rule refuses (`evalq.core.receivers`) fails at once, unconnected.
    """
    settings = get_settings()
    with session_scope() as session:
        found = webhooks.claim_event(session, delivery_id=delivery_id, settings=settings)
        if found is None:
            return {"delivery_id": delivery_id, "status": "nothing to send"}
        payload = found.payload
        if payload is None:  # an evaluation's: its result as it is now
            result = submission_result(
                session, submission_id=str(found.submission_id), settings=settings
            )
            payload = result.model_dump(mode="json", exclude_unset=True)
    delivery = found.delivery
    body = json.dumps(
        envelope(payload, timestamp=delivery.created_at, event=found.event), separators=(",", ":")
    )
    return {"delivery_id": delivery_id, "status": _attempt(self, delivery, body, settings)}


@shared_task(name=WEBHOOK_TASK, autoretry_for=TRANSIENT_DB_ERRORS, retry_backoff=True)
def deliver_webhook(webhook_id: str, submission_id: str, status: str) -> dict[str, str]:
    """An evaluation's event as earlier versions sent it (by webhook, submission and status):
    a message queued before an upgrade stores its event and hands it to `deliver_event`."""
    settings = get_settings()
    with session_scope() as session:
        claimed = webhooks.claim_delivery(
            session,
            webhook_id=webhook_id,
            submission_id=submission_id,
            status=status,
            settings=settings,
        )
    if claimed is None:
        return {"webhook_id": webhook_id, "status": "nothing to send"}
    send_events(current_app, [claimed.id])
    return {"webhook_id": webhook_id, "status": "sent"}


def _attempt(task: CeleryTask, delivery: webhooks.Delivery, body: str, settings: Settings) -> str:
    """POST once, record the attempt, and retry later (raises Retry) or say how it ended."""
    attempt = post_event(delivery, body, attempt=delivery.attempts + 1, settings=settings)
    refused = attempt.error == REFUSED  # retrying cannot help: the rule refuses the receiver
    give_up = refused or attempt.attempt >= settings.webhook_max_attempts
    countdown = 0.0 if give_up else webhook_countdown(attempt.attempt, settings)
    # should the retry's message be lost, the event sweep sends it once this is past
    due = utcnow() + timedelta(
        seconds=countdown + webhook_time_limit(settings) + settings.event_resend_after_s
    )
    with session_scope() as session:
        webhooks.record_attempt(
            session, delivery_id=delivery.id, attempt=attempt, give_up=give_up, due_at=due
        )
    if attempt.error is None:
        return "delivered"
    if give_up:
        log.warning("webhook event %s: gave up after %d attempts", delivery.id, attempt.attempt)
        return "failed"
    raise task.retry(countdown=countdown)


def post_event(
    delivery: webhooks.Delivery, body: str, *, attempt: int, settings: Settings
) -> AttemptRecord:
    """POST ``body`` signed per Standard Webhooks; the attempt's outcome (never raises).

    The receiver's host is resolved once and every address checked (`receiver_addresses`);
    the POST then connects to a checked address, its Host header and TLS server name still the
    URL's host. A refused receiver is recorded as an attempt that connected nowhere. The POST
    ends within EVALQ_WEBHOOK_TIMEOUT_S in all and reads at most EVALQ_WEBHOOK_MAX_ANSWER_BYTES
    of the answer (`evalq.tasks.bounded_post`): a slow or huge answer costs one attempt.
    """
    now = datetime.now(UTC)
    headers = {
        "content-type": "application/json",
        "user-agent": f"evalq-webhooks/{__version__}",
        "webhook-id": delivery.id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Webhook(delivery.secret).sign(delivery.id, now, body),
    }
    started = time.perf_counter()
    status_code: int | None = None
    try:
        addresses = receiver_addresses(delivery.url, allow_private=settings.webhook_allow_private)
        status_code = post_pinned(
            delivery.url,
            addresses,
            body,
            headers,
            limit_s=settings.webhook_timeout_s,
            max_bytes=settings.webhook_max_answer_bytes,
        )
        error = None if 200 <= status_code < 300 else f"HTTP {status_code}"
    except InvalidInput as refusal:
        error = str(refusal)
    except POST_ERRORS as exc:
        error = redact(f"{type(exc).__name__}: {exc}")[:500]
    log.info("webhook POST %s: %s", redact_url(delivery.url), error or f"HTTP {status_code}")
    return AttemptRecord(
        attempt=attempt,
        at=now,
        status_code=status_code,
        error=error,
        duration_ms=round((time.perf_counter() - started) * 1000, 1),
    )
