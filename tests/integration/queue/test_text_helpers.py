"""The in-process worker runs tier 1 in helper processes that own the model: the same scores
as in its own threads, a helper killed mid-run costs a retry and not a hang, and the worker's
shutdown leaves no helper behind."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.support.pipeline import TASK, Pipeline, submission
from tests.support.processes import PATIENCE, wait_until

from evalq.core.profile import profile_named
from evalq.metrics.semantic import SemanticScorer
from evalq.metrics.text import text_result
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.workers import bootstrap, text_helpers
from evalq.workers.embedded import embedded_worker

pytestmark = pytest.mark.both_databases  # the database matters here (tests/conftest.py)


def gone(pid: int) -> bool:
    """True when no process ``pid`` exists (a zombie would still be listed)."""
    return not Path(f"/proc/{pid}").exists()


def test_tier_1_runs_in_helpers_with_the_threads_path_scores_and_stops_with_the_worker(
    pipeline: Callable[..., Pipeline],
) -> None:
    p = pipeline()
    run = submission("s1")
    with embedded_worker(p.app, concurrency=4):
        helpers = text_helpers.current()
        assert helpers is not None and helpers.count == bootstrap.pool_children()
        p.client.submit(run)
        assert p.client.wait(["s1"], timeout=120 * PATIENCE) == {"s1": "done"}
        pids = helpers.pids()
        assert pids and os.getpid() not in pids and not any(map(gone, pids))
        used = {h.threads for s in helpers._scorers.values() for h in s.helpers} - {None}
        assert used == {bootstrap.torch_threads(bootstrap.pool_children())}  # the cap holds
    assert text_helpers.current() is None
    assert all(map(gone, pids))  # no orphan
    stored = p.client.get_result("s1")["tiers"]["text"]
    expected = text_result(
        run["output"],
        TASK.reference_outputs,
        run["usage"]["execution_time"],
        profile=profile_named("default").text,
        semantic=SemanticScorer(),
        context=TASK.context,
    ).model_dump(mode="json")
    floats = {name: value for name, value in expected.items() if isinstance(value, float)}
    assert {"semantic", "overall_similarity", "tier_score"} <= set(floats)
    for name, value in floats.items():
        assert stored["metrics"][name] == pytest.approx(value, abs=1e-6), name


def test_with_no_helpers_tier_1_runs_in_the_workers_threads(
    pipeline: Callable[..., Pipeline],
) -> None:
    p = pipeline(text_helpers="0")
    with embedded_worker(p.app, concurrency=4):
        assert text_helpers.current() is None
        p.client.submit(submission("s1"))
        assert p.client.wait(["s1"], timeout=120 * PATIENCE) == {"s1": "done"}
    assert p.client.get_result("s1")["tiers"]["text"]["status"] == "ok"


def test_a_helper_killed_mid_run_costs_a_retry_not_a_hang(
    pipeline: Callable[..., Pipeline],
) -> None:
    p = pipeline(tier_max_retries="3")
    ids = [f"s{i}" for i in range(8)]
    with embedded_worker(p.app, concurrency=4):
        helpers = text_helpers.current()
        assert helpers is not None
        p.client.submit(submission("warm"))  # a helper with its model loaded
        assert p.client.wait(["warm"], timeout=120 * PATIENCE) == {"warm": "done"}
        victim = helpers.pids()[0]
        p.client.submit_many([submission(sid, tokens=1000 + i) for i, sid in enumerate(ids)])
        os.kill(victim, signal.SIGKILL)
        statuses = p.client.wait(ids, timeout=300 * PATIENCE)
        wait_until(lambda: gone(victim), timeout=30, what="the killed helper reaped")
        assert victim not in helpers.pids()
    assert statuses == dict.fromkeys(ids, "done")
    with session_scope(p.db_url) as session:
        rows = [queries.tier_results(session, submission_id=sid)["text"] for sid in ids]
    assert {row.status for row in rows} == {"ok"}
