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


def test_both_delivery_tasks_carry_a_time_limit_past_their_deadline() -> None:
    """A time limit for the pools that enforce one (prefork); the POST's own deadline holds on
    every pool (tests/integration/queue/test_bounded_post.py)."""
    from evalq.workers.names import EVENT_TASK, WEBHOOK_TASK

    config = celery_config(Settings(webhook_timeout_s=10))
    limits = {
        name: config["task_annotations"][name]["time_limit"] for name in (WEBHOOK_TASK, EVENT_TASK)
    }
    assert limits == {WEBHOOK_TASK: 10 + 1 + 30, EVENT_TASK: 10 + 1 + 30}
    assert config["task_time_limit"] > limits[EVENT_TASK]  # the tiers' own limit is untouched
    soft = {config["task_annotations"][name]["soft_time_limit"] for name in limits}
    assert soft == {10 + 1 + 20}  # below the hard one: a retry validates both


def test_the_beat_runs_the_event_sweep_at_its_setting_on_a_queue_a_worker_takes() -> None:
    from evalq.workers.app import make_app
    from evalq.workers.bootstrap import worker_app
    from evalq.workers.names import EVENT_SWEEP_TASK, MERGE_QUEUE, ROUTES

    app = make_app(Settings(broker_url="memory://", event_sweep_every_s=7))
    entry = app.conf.beat_schedule["evalq-events"]
    assert (entry["task"], entry["schedule"]) == (EVENT_SWEEP_TASK, 7)
    assert ROUTES[EVENT_SWEEP_TASK] == {"queue": MERGE_QUEUE}
    worker = worker_app(Settings(broker_url="memory://"))
    try:
        assert EVENT_SWEEP_TASK in worker.tasks
    finally:
        worker.close()


def test_the_beat_runs_the_ticket_sweep_at_its_setting_on_a_queue_a_worker_takes() -> None:
    from evalq.workers.app import make_app
    from evalq.workers.bootstrap import worker_app
    from evalq.workers.names import MERGE_QUEUE, ROUTES, TICKET_SWEEP_TASK

    app = make_app(Settings(broker_url="memory://", ticket_sweep_every_s=9))
    entry = app.conf.beat_schedule["evalq-tickets"]
    assert (entry["task"], entry["schedule"]) == (TICKET_SWEEP_TASK, 9)
    assert ROUTES[TICKET_SWEEP_TASK] == {"queue": MERGE_QUEUE}
    worker = worker_app(Settings(broker_url="memory://"))
    try:
        assert TICKET_SWEEP_TASK in worker.tasks
    finally:
        worker.close()
