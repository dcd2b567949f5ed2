"""Webhook delivery: POST an evaluation's event to one receiver, signed, with bounded retries.

The merge sends one `deliver_webhook` per webhook of the task after its own commit and never
waits for it: a slow or dead receiver only ever affects its own delivery rows. Attempts are
counted in the store, so a redelivered message counts against EVALQ_WEBHOOK_MAX_ATTEMPTS too.
"""

from __future__ import annotations

import json
import logging
import time
from datetime import UTC, datetime

import httpx
from celery import Task as CeleryTask
from celery import current_app, shared_task
from standardwebhooks import Webhook

from evalq import __version__
from evalq.core.redact import redact
from evalq.core.settings import get_settings
from evalq.core.webhooks import PRIVATE_RULE, AttemptRecord, envelope, private_address
from evalq.read.submission import submission_result
from evalq.store import webhooks
from evalq.store.db import session_scope
from evalq.workers.names import ROUTES, WEBHOOK_TASK
from evalq.workers.policy import TRANSIENT_DB_ERRORS, WEBHOOK_MAX_RETRIES, webhook_countdown

log = logging.getLogger(__name__)


def send_events(submission_id: str, task_id: str, status: str) -> int:
    """Send one delivery task per webhook of the task; how many were sent.

    Called after the merge has committed. Whatever goes wrong here is logged and swallowed:
    an event is never worth a merge (an unreachable broker loses these events, never the
    evaluation).
    """
    try:
        with session_scope() as session:
            ids = webhooks.webhook_ids(session, task_id=task_id)
        for webhook_id in ids:
            current_app.send_task(
                WEBHOOK_TASK,
                args=[webhook_id, submission_id, status],
                queue=ROUTES[WEBHOOK_TASK]["queue"],
            )
        return len(ids)
    except Exception:
        log.exception("could not send the webhook events of submission %s", submission_id)
        return 0


@shared_task(
    bind=True,
    name=WEBHOOK_TASK,
    autoretry_for=TRANSIENT_DB_ERRORS,  # the store restarted: try again
    retry_backoff=True,
    max_retries=WEBHOOK_MAX_RETRIES,
)
def deliver_webhook(
    self: CeleryTask, webhook_id: str, submission_id: str, status: str
) -> dict[str, str]:
    """Deliver one evaluation's event to one webhook, retrying a failed POST with backoff.

    A 2xx answer delivers it; anything else (an error status, no answer in
    EVALQ_WEBHOOK_TIMEOUT_S) is retried until EVALQ_WEBHOOK_MAX_ATTEMPTS attempts were made.
    """
    settings = get_settings()
    with session_scope() as session:
        delivery = webhooks.claim_delivery(
            session,
            webhook_id=webhook_id,
            submission_id=submission_id,
            status=status,
            settings=settings,
        )
        if delivery is None:
            return {"webhook_id": webhook_id, "status": "nothing to send"}
        result = submission_result(session, submission_id=submission_id, settings=settings)
    if settings.webhook_forbid_private and private_address(delivery.url) is not None:
        with session_scope() as session:
            reason = f"url {PRIVATE_RULE}"
            webhooks.mark_undeliverable(session, delivery_id=delivery.id, reason=reason)
        return {"webhook_id": webhook_id, "status": "failed"}
    body = json.dumps(envelope(result, timestamp=delivery.created_at), separators=(",", ":"))
    attempt = post_event(
        delivery, body, attempt=delivery.attempts + 1, timeout=settings.webhook_timeout_s
    )
    give_up = attempt.attempt >= settings.webhook_max_attempts
    with session_scope() as session:
        webhooks.record_attempt(session, delivery_id=delivery.id, attempt=attempt, give_up=give_up)
    if attempt.error is None:
        return {"webhook_id": webhook_id, "status": "delivered"}
    if give_up:
        log.warning(
            "webhook %s: gave up on %s after %d attempts", webhook_id, delivery.id, attempt.attempt
        )
        return {"webhook_id": webhook_id, "status": "failed"}
    raise self.retry(countdown=webhook_countdown(attempt.attempt, settings))


def post_event(
    delivery: webhooks.Delivery, body: str, *, attempt: int, timeout: float
) -> AttemptRecord:
    """POST ``body`` signed per Standard Webhooks; the attempt's outcome (never raises)."""
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
        response = httpx.post(delivery.url, content=body.encode(), headers=headers, timeout=timeout)
        status_code = response.status_code
        error = None if response.is_success else f"HTTP {status_code}"
    except httpx.HTTPError as exc:
        error = redact(f"{type(exc).__name__}: {exc}")[:500]
    return AttemptRecord(
        attempt=attempt,
        at=now,
        status_code=status_code,
        error=error,
        duration_ms=round((time.perf_counter() - started) * 1000, 1),
    )
