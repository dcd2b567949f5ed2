"""The ticket sweep (beat): a task whose run tickets lapsed since its board was drawn is refreshed.

A ticket without a run by its deadline counts as a failure at the worst cost (`evalq.read.plans`).
Nothing is written when a deadline passes, so a read finds the stored figures stale (their
version names the tickets as they were) and ranks from the runs until the next refresh; no merge
may come to schedule one. The sweep schedules it: every `EVALQ_TICKET_SWEEP_EVERY_S` seconds, one
refresh per task whose stored figures are older than a deadline that has passed
(`evalq.store.tickets.lapsed_since_drawn`), claimed as a merge claims it, so a refresh already
scheduled is not doubled. The refresh then stores the figures with the failures counted.
"""

from __future__ import annotations

import logging

from celery import current_app, shared_task

from evalq.store import queries
from evalq.store.db import session_scope
from evalq.store.tickets import lapsed_since_drawn
from evalq.workers.chords import schedule_refresh
from evalq.workers.names import TICKET_SWEEP_TASK
from evalq.workers.policy import TRANSIENT_DB_ERRORS

log = logging.getLogger(__name__)


@shared_task(name=TICKET_SWEEP_TASK, autoretry_for=TRANSIENT_DB_ERRORS, retry_backoff=True)
def refresh_lapsed() -> list[str]:
    """Schedule the refresh of each task whose tickets lapsed since its board was drawn; the
    tasks whose refresh this sweep scheduled."""
    with session_scope() as session:
        claimed = [
            task_id
            for task_id in lapsed_since_drawn(session)
            if queries.claim_refresh(session, task_id=task_id)
        ]
    try:
        for task_id in claimed:
            schedule_refresh(current_app, task_id)
    except Exception as error:  # the broker is down: give the claims back, the next sweep sends
        log.warning("could not schedule %d refresh(es): %s", len(claimed), type(error).__name__)
        with session_scope() as session:
            for task_id in claimed:
                queries.release_refresh(session, task_id=task_id)
        return []
    return claimed
