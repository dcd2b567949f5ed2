"""The whole queue on real Redis and a real store: chord -> tiers -> merge -> evaluation."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
from sqlalchemy import func, select
from tests.support.pipeline import TASK, Pipeline, submission
from tests.support.processes import PATIENCE
from tests.support.reviews import review_trace

from evalq.store import queries
from evalq.store.db import session_scope
from evalq.store.models import EvaluationRow, TierResultRow
from evalq.tasks.recover import recover
from evalq.workers.embedded import embedded_worker
from evalq.workers.names import MERGE_TASK, TIER_TASKS

pytestmark = pytest.mark.both_databases  # the database matters here (tests/conftest.py)


def evaluations(url: str) -> int:
    with session_scope(url) as session:
        return int(session.scalar(select(func.count()).select_from(EvaluationRow)) or 0)


def test_a_chord_completes_and_stores_the_evaluation(pipeline: Callable[..., Pipeline]) -> None:
    p = pipeline()
    with embedded_worker(p.app, concurrency=4):
        p.client.submit(submission("s1"))
        assert p.client.wait(["s1"], timeout=120 * PATIENCE) == {"s1": "done"}
    result = p.client.get_result("s1")
    assert result["tiers"]["text"]["status"] == "ok"
    assert result["tiers"]["graph"]["status"] == "ok"
    assert result["missing_tiers"] == {
        "judge": {"status": "skipped", "reason": "no judge configured (EVALQ_JUDGE_MODEL unset)"}
    }
    peer = result["scores"]["peerread"]
    assert "planning_rationality" in peer["missing"] and 0 < peer["composite"] <= 1
    assert 0 < result["tiers"]["text"]["metrics"]["semantic"] <= 1
    assert result["scores"]["arena"]["baseline_is_default"] is True
    # scored against the task's current baseline: none yet (0), or the one the worker's
    # debounced refresh stored after the merge, if it ran before the worker stopped
    with session_scope(p.db_url) as session:
        stored = queries.current_baseline(session, task_id=TASK.id)
    assert result["baseline_version"] == (stored.version if stored is not None else 0)


def test_a_tier_failing_after_its_retries_degrades_not_hangs(
    pipeline: Callable[..., Pipeline], tmp_path: Path
) -> None:
    broken = tmp_path / "not-a-model"
    broken.mkdir()  # exists, but holds no model: loading fails at run time
    profile = tmp_path / "broken.toml"
    profile.write_text(f'[text]\nmodel_path = "{broken}"\n')
    p = pipeline(profile_path=str(profile))
    with embedded_worker(p.app, concurrency=4):
        p.client.submit(submission("s1"))
        assert p.client.wait(["s1"], timeout=120 * PATIENCE) == {"s1": "degraded"}
    result = p.client.get_result("s1")
    text = result["missing_tiers"]["text"]
    assert text["status"] == "failed" and text["error"]["attempts"] == 2  # 1 try + 1 retry
    assert "traceback" not in text["error"]
    assert result["tiers"]["graph"]["status"] == "ok"
    peer = result["scores"]["peerread"]
    assert {"task_success", "output_similarity"} <= set(peer["missing"])
    assert peer["composite"] is not None  # renormalised over the tiers present, never 0-filled
    with session_scope(p.db_url) as session:  # the traceback is kept for operators
        assert (
            "Traceback"
            in queries.tier_results(session, submission_id="s1")["text"].error["traceback"]
        )


def test_a_configuration_error_fails_the_tier_without_retrying(
    pipeline: Callable[..., Pipeline], tmp_path: Path
) -> None:
    profile = tmp_path / "missing.toml"
    profile.write_text('[text]\nmodel_path = "/nonexistent/model"\n')
    p = pipeline(profile_path=str(profile))
    with embedded_worker(p.app, concurrency=4):
        p.client.submit(submission("s1"))
        assert p.client.wait(["s1"], timeout=120 * PATIENCE) == {"s1": "degraded"}
    error = p.client.get_result("s1")["missing_tiers"]["text"]["error"]
    assert error["type"] == "InvalidInput" and error["attempts"] == 1
    assert "text.model_path" in error["message"]


def test_merge_twice_and_a_duplicated_tier_leave_one_evaluation(
    pipeline: Callable[..., Pipeline],
) -> None:
    p = pipeline()
    with embedded_worker(p.app, concurrency=4):
        p.client.submit(submission("s1"))
        p.client.wait(["s1"], timeout=120 * PATIENCE)
        first = p.client.get_result("s1")
        # A redelivered tier message (same task id) and a second merge.
        p.app.send_task(TIER_TASKS["graph"], args=["s1"], task_id="s1:graph:1").get(
            timeout=60 * PATIENCE
        )
        p.app.send_task(MERGE_TASK, args=[[], "s1"]).get(timeout=60 * PATIENCE)
    second = p.client.get_result("s1")
    assert evaluations(p.db_url) == 1
    assert second["scores"] == first["scores"]
    with session_scope(p.db_url) as session:
        row = queries.get_evaluation(session, submission_id="s1")
        assert row is not None and row.merge_count == 2
        tiers = session.scalars(select(TierResultRow).where(TierResultRow.tier == "graph")).all()
        assert len(tiers) == 1 and tiers[0].deliveries == 2 and tiers[0].status == "ok"


def test_a_batch_survives_a_broker_flush_through_recover(
    pipeline: Callable[..., Pipeline],
) -> None:
    p = pipeline()
    ids = [f"s{i}" for i in range(6)]
    p.client.submit_many([submission(i) for i in ids])  # stored and enqueued, no worker yet
    with redis.Redis.from_url(p.redis_url) as broker:
        broker.flushdb()  # the broker loses every message
    with session_scope(p.db_url) as session:
        assert set(queries.status_counts(session, ids=ids).values()) == {"queued"}
    with embedded_worker(p.app, concurrency=4):
        assert sorted(recover(p.app, older_than=timedelta(seconds=0))) == ids
        statuses = p.client.wait(ids, timeout=180 * PATIENCE)
    assert set(statuses.values()) == {"done"}
    assert evaluations(p.db_url) == len(ids)


def reworded_trace() -> dict[str, Any]:
    """The review trace with its first step's context worded otherwise."""
    trace = review_trace()
    trace["steps"][0]["context"] = "look up"
    return trace


def test_baseline_leaves_its_default_and_ties_rank_1_1_3(
    pipeline: Callable[..., Pipeline],
) -> None:
    from evalq.read.leaderboard import leaderboard

    p = pipeline()
    runs = {  # a and b are equal in every figure the board ranks by: they must tie
        "a": submission("a", tokens=800, tool_calls=3, time=20),
        # b: the same totals reported as input + output tokens, a step's context worded
        # otherwise, and two iterations where a made one: b is its own run. (a's output and
        # trace with a word changed at a's usage, every figure, would be a near-copy of a,
        # counted once: docs/scoring.md; the PeerRead composite this board ranks by does not
        # read iterations, so the two still tie.)
        "b": submission("b", tokens=800, tool_calls=3, time=20)
        | {
            "trace": reworded_trace(),
            "usage": {
                "input_tokens": 600,
                "output_tokens": 200,
                "tool_calls": 3,
                "iterations": 2,
                "execution_time": 20,
                "cost_usd": 800 / 100_000,
            },
        },
        "c": submission("c", tokens=1500, tool_calls=6, time=60),
        "d": submission("d", tokens=3000, tool_calls=9, time=120),
        "e": submission("e", tokens=5000, tool_calls=12, time=300),
    }
    with embedded_worker(p.app, concurrency=4):
        p.client.submit_many(list(runs.values()))
        p.client.wait(list(runs), timeout=180 * PATIENCE)
        p.app.send_task("evalq.refresh_baseline", args=[TASK.id]).get(timeout=60 * PATIENCE)
    with session_scope(p.db_url) as session:
        baseline = queries.current_baseline(session, task_id=TASK.id)
        assert baseline is not None and baseline.submission_count == 5
        assert baseline.data["is_default"] is False
        board = leaderboard(session, task_id=TASK.id)
    ranks = {e.submission_id: e.rank for e in board.entries}
    assert ranks["a"] == ranks["b"] == 1 and ranks["c"] == 3
    assert board.baseline_version == baseline.version and not board.baseline_is_default
