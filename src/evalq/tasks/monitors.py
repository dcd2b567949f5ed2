"""Monitors on the queue: check them (after a task's refresh, and on the beat) and send the
events a change of state stored (delivered as every webhook event is: `evalq.tasks.webhooks`)."""

from __future__ import annotations

import logging
from collections.abc import Collection

from celery import current_app, shared_task

from evalq.core.settings import get_settings
from evalq.read import monitors
from evalq.store.db import session_scope
from evalq.tasks.webhooks import send_events
from evalq.workers.names import MONITOR_TASK
from evalq.workers.policy import TRANSIENT_DB_ERRORS

log = logging.getLogger(__name__)


def check_monitors(task_ids: Collection[str] | None = None) -> int:
    """Check the monitors (on ``task_ids``, or every task), then send the events stored; how
    many were sent. Called after a refresh has committed: whatever goes wrong is logged and
    swallowed (a monitor is never worth a refresh; the beat checks again, and an event stored
    but not sent is sent by the event sweep)."""
    try:
        with session_scope() as session:
            due = monitors.check(session, settings=get_settings(), task_ids=task_ids)
    except Exception:
        log.exception("could not check the monitors of %s", task_ids or "every task")
        return 0
    return send_events(current_app, due)


@shared_task(name=MONITOR_TASK, autoretry_for=TRANSIENT_DB_ERRORS, retry_backoff=True)
def check_every_monitor() -> int:
    """The beat's check of every monitor on every task; how many events it sent."""
    return check_monitors()
