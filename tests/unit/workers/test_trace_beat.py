"""The trace sweep is a beat entry that a worker can run."""

from __future__ import annotations

from evalq.core.settings import Settings
from evalq.workers.app import make_app
from evalq.workers.bootstrap import worker_app
from evalq.workers.names import FINALISE_TRACES_TASK, MERGE_QUEUE, ROUTES


def test_the_beat_schedules_the_trace_sweep_at_its_setting_on_a_queue_a_worker_takes() -> None:
    app = make_app(Settings(broker_url="memory://", trace_sweep_every_s=2.5))
    entry = app.conf.beat_schedule["evalq-finalise-traces"]
    assert (entry["task"], entry["schedule"]) == (FINALISE_TRACES_TASK, 2.5)
    assert ROUTES[FINALISE_TRACES_TASK] == {"queue": MERGE_QUEUE}
    worker = worker_app(Settings(broker_url="memory://"))
    try:
        assert FINALISE_TRACES_TASK in worker.tasks
    finally:
        worker.close()
