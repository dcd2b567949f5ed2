"""Monitors on the queue: check them (after a task's refresh, and on the beat) and deliver the
events a change of state stored, signed as every webhook event is (`evalq.tasks.webhooks`)."""

from __future__ import annotations

import json
import logging
from collections.abc import Collection

from celery import Task as CeleryTask
from celery import current_app, shared_task

from evalq.core.settings import get_settings
from evalq.core.webhooks import envelope
from evalq.read import monitors
from evalq.store import webhooks
from evalq.store.db import session_scope
from evalq.tasks.webhooks import REFUSED, post_event
from evalq.workers.names import MONITOR_EVENT_TASK, MONITOR_TASK, ROUTES
from evalq.workers.policy import TRANSIENT_DB_ERRORS, WEBHOOK_MAX_RETRIES, webhook_countdown

log = logging.getLogger(__name__)


def check_monitors(task_ids: Collection[str] | None = None) -> int:
    """Check the monitors (on ``task_ids``, or every task), then send the events stored; how
    many were sent. Called after a refresh has committed: whatever goes wrong is logged and
    swallowed (a monitor is never worth a refresh; the beat checks again)."""
    try:
        with session_scope() as session:
            due = monitors.check(session, task_ids=task_ids)
        for delivery_id in due:
            current_app.send_task(
                MONITOR_EVENT_TASK,
                args=[delivery_id],
                queue=ROUTES[MONITOR_EVENT_TASK]["queue"],
            )
        return len(due)
    except Exception:
        log.exception("could not check the monitors of %s", task_ids or "every task")
        return 0


@shared_task(name=MONITOR_TASK, autoretry_for=TRANSIENT_DB_ERRORS, retry_backoff=True)
def check_every_monitor() -> int:
    """The beat's check of every monitor on every task; how many events it sent."""
    return check_monitors()


@shared_task(
    bind=True,
    name=MONITOR_EVENT_TASK,
    autoretry_for=TRANSIENT_DB_ERRORS,
    retry_backoff=True,
    max_retries=WEBHOOK_MAX_RETRIES,
)
def deliver_event(self: CeleryTask, delivery_id: str) -> dict[str, str]:
    """Deliver one stored event (a monitor's) to its webhook, retrying as an evaluation's."""
    settings = get_settings()
    with session_scope() as session:
        found = webhooks.claim_event(session, delivery_id=delivery_id, settings=settings)
    if found is None:
        return {"delivery_id": delivery_id, "status": "nothing to send"}
    delivery, event, payload = found
    body = json.dumps(
        envelope(payload, timestamp=delivery.created_at, event=event), separators=(",", ":")
    )
    attempt = post_event(delivery, body, attempt=delivery.attempts + 1, settings=settings)
    give_up = attempt.error == REFUSED or attempt.attempt >= settings.webhook_max_attempts
    with session_scope() as session:
        webhooks.record_attempt(session, delivery_id=delivery.id, attempt=attempt, give_up=give_up)
    if attempt.error is None:
        return {"delivery_id": delivery_id, "status": "delivered"}
    if give_up:
        return {"delivery_id": delivery_id, "status": "failed"}
    raise self.retry(countdown=webhook_countdown(attempt.attempt, settings))
