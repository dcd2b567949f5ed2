"""Webhook retries: bounded, exponential with jitter, and always inside the visibility timeout."""

from __future__ import annotations

import pytest

from evalq.core.settings import Settings
from evalq.workers.app import celery_config
from evalq.workers.policy import (
    RETRY_CAP_S,
    longest_webhook_wait,
    webhook_countdown,
    webhook_countdown_ceiling,
)


def test_the_countdown_doubles_with_jitter_and_is_capped() -> None:
    settings = Settings(webhook_backoff_s=5)
    for attempts, ceiling in ((1, 5), (2, 10), (3, 20), (4, 40), (10, RETRY_CAP_S)):
        assert webhook_countdown_ceiling(attempts, settings) == ceiling
        for _ in range(50):
            assert ceiling / 2 <= webhook_countdown(attempts, settings) <= ceiling


def test_the_defaults_fit_the_smallest_visibility_timeout() -> None:
    settings = Settings(visibility_timeout_s=60, task_time_limit_s=10)
    assert longest_webhook_wait(settings) == 40 + 10  # 5 * 2**3 after the 4th failure, + POST
    celery_config(settings)  # no error


def test_a_retry_longer_than_the_visibility_timeout_is_refused() -> None:
    settings = Settings(
        visibility_timeout_s=120, task_time_limit_s=10, webhook_backoff_s=30, webhook_max_attempts=4
    )
    with pytest.raises(ValueError, match="EVALQ_WEBHOOK_BACKOFF_S"):
        celery_config(settings)
