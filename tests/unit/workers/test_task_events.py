"""Workers send task events only when asked: a monitor's request, or EVALQ_TASK_EVENTS."""

from __future__ import annotations

from evalq.core.settings import Settings
from evalq.workers.app import celery_config


def test_workers_send_no_task_events_unless_asked() -> None:
    # Three messages per task (received, started, succeeded) that nothing reads without a
    # monitor; Flower turns them on itself (issue 49).
    assert celery_config(Settings())["worker_send_task_events"] is False
    assert celery_config(Settings(task_events=True))["worker_send_task_events"] is True


def test_producers_send_no_task_sent_events_unless_asked() -> None:
    assert celery_config(Settings(), producer=True)["task_send_sent_event"] is False
    assert celery_config(Settings(task_sent_events=True), producer=True)["task_send_sent_event"]
