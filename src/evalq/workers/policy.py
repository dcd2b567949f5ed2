"""Every retry and countdown rule of the queue, in one place.

Tier tasks retry a failing computation with exponential backoff and full jitter; a transient
database error is retried the same way with at least a 1 s base; the merge waits for unfinished
tiers with a doubling countdown; a baseline refresh retries a lost store and re-reads after losing
the race for its version number. `longest_retry_countdown` is what the visibility-timeout check
of `evalq.workers.app.celery_config` relies on, so it must follow `retry_countdown`.
"""

from __future__ import annotations

import random

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from evalq.core.settings import Settings

RETRY_CAP_S = 300
"""No retry countdown is longer than this (seconds)."""

MERGE_MAX_WAITS = 40
"""How often a merge that found tiers unfinished waits for them before degrading."""

REFRESH_ATTEMPTS = 5
"""How often a refresh that lost a race for its version number to another refresh reads again."""

REFRESH_MAX_RETRIES = 5
"""Retries of a baseline refresh whose store went away (the refresh is idempotent)."""

TRANSIENT_DB_ERRORS = (OperationalError, InterfaceError)
"""Store errors worth retrying: the database restarted, a connection dropped."""


def retry_countdown(retries: int, base: float) -> float:
    """Exponential backoff with full jitter in [ceiling/2, ceiling], capped at `RETRY_CAP_S`."""
    ceiling = min(RETRY_CAP_S, base * 2**retries)
    return float(ceiling / 2 + random.uniform(0, ceiling / 2))


def db_retry_countdown(retries: int, settings: Settings) -> float:
    """The countdown before retrying a tier after a transient database error (base >= 1 s)."""
    return retry_countdown(retries, max(1, settings.tier_retry_backoff_s))


def longest_retry_countdown(settings: Settings) -> int:
    """The largest countdown a tier retry can wait (the last retry's ceiling)."""
    if settings.tier_max_retries == 0:
        return 0
    base = max(1, settings.tier_retry_backoff_s)
    return int(min(RETRY_CAP_S, base * 2 ** (settings.tier_max_retries - 1)))


def longest_webhook_wait(settings: Settings) -> float:
    """The longest a delivery message waits and runs: its last countdown plus one POST."""
    last = webhook_countdown_ceiling(settings.webhook_max_attempts - 1, settings)
    return last + settings.webhook_timeout_s


WEBHOOK_TASK_SLACK_S = 30
"""What a delivery task may spend beside its POST: resolving the receiver, reading and writing
its delivery row."""


def webhook_time_limit(settings: Settings) -> int:
    """The hard time limit of a delivery task: its POST's total deadline and the slack."""
    return int(settings.webhook_timeout_s) + 1 + WEBHOOK_TASK_SLACK_S


WEBHOOK_MAX_RETRIES = 100
"""Celery's bound on a delivery task's retries; the real bound is EVALQ_WEBHOOK_MAX_ATTEMPTS,
counted in the store (a redelivered message counts too). This one only stops a store that
stays down from retrying forever."""


def webhook_countdown_ceiling(attempts: int, settings: Settings) -> float:
    """The longest wait after ``attempts`` failed deliveries: the base doubled, at most 300 s."""
    if attempts <= 0:
        return 0.0
    return float(min(RETRY_CAP_S, settings.webhook_backoff_s * 2 ** (attempts - 1)))


def webhook_countdown(attempts: int, settings: Settings) -> float:
    """Seconds before the next delivery of an event that failed ``attempts`` times (>= 1).

    EVALQ_WEBHOOK_BACKOFF_S, doubling per attempt, capped at `RETRY_CAP_S`, with full jitter in
    [ceiling/2, ceiling] so receivers that come back are not hit by every retry at once.
    """
    return retry_countdown(attempts - 1, settings.webhook_backoff_s)


def merge_wait(waits: int) -> float:
    """Seconds to wait before re-checking unfinished tiers (1, 2, 4 ... capped at 30)."""
    return float(min(30, 2**waits))


def is_transient_db_error(exc: BaseException) -> bool:
    """True for a store error worth retrying: the database restarted, a connection dropped."""
    return isinstance(exc, TRANSIENT_DB_ERRORS) or (
        isinstance(exc, DBAPIError) and exc.connection_invalidated
    )
