"""Webhook delivery: POST an evaluation's event to one receiver, signed, with bounded retries.

The merge sends one `deliver_webhook` per webhook of the task after its own commit and never
waits for it: a slow or dead receiver only ever affects its own delivery rows. Attempts are
counted in the store, so a redelivered message counts against EVALQ_WEBHOOK_MAX_ATTEMPTS too.
"""

from __future__ import annotations

import json
import logging
import time
from contextlib import suppress
from datetime import UTC, datetime

import httpx
from celery import Task as CeleryTask
from celery import current_app, shared_task
from standardwebhooks import Webhook

from evalq import __version__
from evalq.core.errors import InvalidInput
from evalq.core.receivers import PRIVATE_RULE, IPAddress, receiver_addresses
from evalq.core.redact import redact, redact_url
from evalq.core.settings import Settings, get_settings
from evalq.core.webhooks import AttemptRecord, envelope
from evalq.read.submission import submission_result
from evalq.store import webhooks
from evalq.store.db import session_scope
from evalq.workers.names import ROUTES, WEBHOOK_TASK
from evalq.workers.policy import TRANSIENT_DB_ERRORS, WEBHOOK_MAX_RETRIES, webhook_countdown

log = logging.getLogger(__name__)
REFUSED = f"url: {PRIVATE_RULE}"
"""The error of an attempt the address rule refused (no connection was made)."""


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
    A receiver the address rule refuses (`evalq.core.receivers`) fails at once, unconnected.
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
        found = submission_result(session, submission_id=submission_id, settings=settings)
        result = found.model_dump(mode="json", exclude_unset=True)
    body = json.dumps(envelope(result, timestamp=delivery.created_at), separators=(",", ":"))
    attempt = post_event(delivery, body, attempt=delivery.attempts + 1, settings=settings)
    refused = attempt.error == REFUSED  # retrying cannot help: the rule refuses the receiver
    give_up = refused or attempt.attempt >= settings.webhook_max_attempts
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
    delivery: webhooks.Delivery, body: str, *, attempt: int, settings: Settings
) -> AttemptRecord:
    """POST ``body`` signed per Standard Webhooks; the attempt's outcome (never raises).

    The receiver's host is resolved once and every address checked (`receiver_addresses`);
    the POST then connects to a checked address, its Host header and TLS server name still the
    URL's host. A refused receiver is recorded as an attempt that connected nowhere.
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
        response = post_pinned(delivery.url, addresses, body, headers, settings.webhook_timeout_s)
        status_code = response.status_code
        error = None if response.is_success else f"HTTP {status_code}"
    except InvalidInput as refusal:
        error = str(refusal)
    except httpx.HTTPError as exc:
        error = redact(f"{type(exc).__name__}: {exc}")[:500]
    log.info("webhook POST %s: %s", redact_url(delivery.url), error or f"HTTP {status_code}")
    return AttemptRecord(
        attempt=attempt,
        at=now,
        status_code=status_code,
        error=error,
        duration_ms=round((time.perf_counter() - started) * 1000, 1),
    )


def post_pinned(
    url: str, addresses: list[IPAddress], body: str, headers: dict[str, str], timeout: float
) -> httpx.Response:
    """POST to ``url`` over a connection to one of ``addresses``, never following a redirect.

    The addresses are tried in order, the next one only when connecting to one fails.
    """
    target = httpx.URL(url)
    headers = {**headers, "host": target.netloc.decode("ascii")}
    extensions = {"sni_hostname": target.raw_host.decode("ascii")}  # TLS: the name, not the IP
    with httpx.Client(timeout=timeout, follow_redirects=False) as client:

        def post(address: IPAddress) -> httpx.Response:
            pinned = target.copy_with(host=str(address))
            return client.post(pinned, content=body, headers=headers, extensions=extensions)

        *others, last = addresses
        for address in others:
            with suppress(httpx.ConnectError):
                return post(address)
        return post(last)
