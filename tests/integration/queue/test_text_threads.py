"""torch's thread cap holds wherever tier 1 runs: in the in-process worker's threads and in a
prefork text worker's children.

Each run records, in the thread that computes the text tier, the thread count torch uses
(tests/support/thread_probe.py). The in-process test first raises torch's process-wide count
above the cap, as torch's default of one thread per CPU is on a larger machine: a cap set once
per process, or only in prefork children, leaves the worker's threads at that count.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from tests.support import thread_probe
from tests.support.databases import private_redis
from tests.support.pipeline import TASK, submission
from tests.support.processes import PATIENCE, process_env, start, stop, wait_until
from tests.support.settings import REDIS_TEST_DB, configure, pipeline_settings

from evalq.core.settings import Settings
from evalq.service.client import Client
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.workers import bootstrap
from evalq.workers.embedded import embedded_concurrency

pytestmark = pytest.mark.both_databases  # the module's rule; its tests use SQLite stores

ROOT = Path(__file__).resolve().parents[3]


def probed(path: Path) -> list[tuple[int, int]]:
    """The ``(pid, threads)`` records of the probe file."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").split()
    return [(int(pid), int(n)) for pid, n in zip(lines[::2], lines[1::2], strict=True)]


def texts_done(url: str, ids: list[str]) -> bool:
    """Every one of ``ids`` has its text tier stored ``ok`` (a failure stops the wait)."""
    with session_scope(url) as session:
        statuses = [queries.tier_results(session, submission_id=sid).get("text") for sid in ids]
    failed = [row for row in statuses if row is not None and row.status == "failed"]
    assert not failed, failed
    return all(row is not None and row.status == "ok" for row in statuses)


@pytest.fixture
def raised_torch_threads() -> Iterator[int]:
    """torch's process-wide thread count set above any cap, restored afterwards."""
    before = torch.get_num_threads()
    raised = 2 * (os.cpu_count() or 1) + 1
    torch.set_num_threads(raised)
    yield raised
    torch.set_num_threads(before)


def test_the_in_process_workers_threads_run_tier_1_capped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raised_torch_threads: int
) -> None:
    probe = tmp_path / "threads"
    monkeypatch.setenv(thread_probe.PROBE_FILE, str(probe))
    for name in ("EVALQ_BROKER_URL", "EVALQ_RESULT_BACKEND"):  # no broker: evaluated in-process
        monkeypatch.delenv(name, raising=False)
    # the workers' store too; the tier-1 slots of this test's processes only (not the machine's);
    # tier 1 in the worker's threads (its helper processes, which take the same cap with each
    # batch, are tests/integration/queue/test_text_helpers.py's)
    configure(
        monkeypatch,
        database_url=f"sqlite:///{tmp_path / 'evalq.db'}",
        text_slots_dir=str(tmp_path / "slots"),
        text_helpers="0",
    )
    client = Client()
    assert client.in_process
    client.put_task(TASK)
    ids = [f"t{i}" for i in range(3)]
    with client:
        client.submit_many([submission(sid) for sid in ids])
        assert set(client.wait(ids, timeout=300 * PATIENCE).values()) == {"done"}

    cap = bootstrap.torch_threads(bootstrap.pool_children())
    assert cap < raised_torch_threads
    records = probed(probe)
    # every computation in this process ran capped (an earlier test's worker may add some); one
    # record per batch, and how many runs a batch takes depends on when they arrive
    assert records and set(records) == {(os.getpid(), cap)}, records


def test_the_in_process_worker_has_a_thread_per_cpu_and_some_for_io() -> None:
    assert embedded_concurrency(2) == 6
    assert embedded_concurrency(16) == 20


def test_a_prefork_text_workers_children_run_tier_1_capped(tmp_path: Path) -> None:
    probe = tmp_path / "threads"
    children = 2
    with private_redis(REDIS_TEST_DB) as redis_url:
        settings = pipeline_settings(
            f"sqlite:///{tmp_path / 'evalq.db'}", redis_url, text_slots_dir=str(tmp_path / "slots")
        )
        client = Client(Settings(**settings))  # type: ignore[arg-type]
        client.put_task(TASK)
        env = process_env(settings) | {thread_probe.PROBE_FILE: str(probe)}
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
        args = ["worker", "--queues", "evalq.text", "--pool", "prefork"]
        args += ["--concurrency", str(children), "--include", "tests.support.thread_probe"]
        worker = start(args, env, tmp_path / "worker.log", cwd=ROOT)
        try:
            ids = [f"p{i}" for i in range(3)]
            client.submit_many([submission(sid) for sid in ids])
            # A submission's tier 1 makes one or more model batches (its task's anchors at first)
            wait_until(lambda: texts_done(client.url, ids), timeout=300, what="three text tiers")
        finally:
            stop(worker)
            client.app.close()

    records = probed(probe)
    assert {pid for pid, _ in records}.isdisjoint({os.getpid(), worker.pid})  # the children
    assert {threads for _, threads in records} == {bootstrap.torch_threads(children)}
