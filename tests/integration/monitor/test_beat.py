"""`evalq beat` schedules the recovery sweep on the real broker."""

from __future__ import annotations

from pathlib import Path

import pytest
from celery import Celery
from tests.support.databases import migrate_store
from tests.support.monitor import evalq_env
from tests.support.processes import start, stop, wait_until
from tests.support.settings import configure, pipeline_settings

from evalq.workers.app import make_app
from evalq.workers.depths import queue_depths
from evalq.workers.names import MERGE_QUEUE


def test_beat_sends_the_recovery_sweep_to_the_merge_queue(
    redis10_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db_url = f"sqlite:///{tmp_path / 'evalq.db'}"
    migrate_store(db_url)
    settings = pipeline_settings(db_url, redis10_url, recover_every_s="1")
    configure(monkeypatch, **settings)
    app: Celery = make_app()
    schedule = tmp_path / "celerybeat-schedule"
    beat = start(["beat", "--schedule", str(schedule)], evalq_env(**settings), tmp_path / "b.log")
    try:
        # no worker consumes: every sweep beat sends stays in evalq.merge
        wait_until(
            lambda: queue_depths(app)[MERGE_QUEUE] >= 2,
            timeout=60,
            what="two recovery sweeps",
        )
        depths = queue_depths(app)
    finally:
        stop(beat)
        app.close()
    assert all(n == 0 for queue, n in depths.items() if queue != MERGE_QUEUE), depths
    log = (tmp_path / "b.log").read_text()
    assert "Sending due task evalq-recover (evalq.recover)" in log, log
    assert list(tmp_path.glob("celerybeat-schedule*"))  # the schedule file we named
