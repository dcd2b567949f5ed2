"""A tier that cannot apply is stored as skipped at submit and never sent to a worker."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from sqlalchemy import select
from tests.support.databases import fresh_database, private_redis
from tests.support.reviews import review_task, review_trace
from tests.support.settings import REDIS_TEST_DB

from evalq.core.settings import Settings
from evalq.read.baseline import current_baseline
from evalq.service.client import Client
from evalq.service.evaluated import record_evaluation
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.store.models import EvaluationRow, StandingRow, TierResultRow
from evalq.tasks.tiers import compute_graph
from evalq.workers.names import QUEUES, REFRESH_TASK

pytestmark = pytest.mark.both_databases  # the database matters here (tests/conftest.py)


@pytest.fixture(params=["sqlite", "postgresql"])
def client(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Client]:
    with fresh_database(request.param, tmp_path) as url, private_redis(REDIS_TEST_DB) as broker:
        client = Client(Settings(database_url=url, broker_url=broker))
        yield client
        client.app.close()


def run(sid: str, task_id: str, **changes: Any) -> dict[str, Any]:
    usage = {"input_tokens": 10, "output_tokens": 5, "tool_calls": 1, "execution_time": 1.0}
    base = {"id": sid, "task_id": task_id, "tool": "aider", "model": "m", "usage": usage}
    return base | {"output": "A careful review."} | changes


def tier_rows(client: Client, sid: str) -> dict[str, tuple[str, str | None]]:
    with session_scope(client.url) as session:
        rows = session.scalars(select(TierResultRow).where(TierResultRow.submission_id == sid))
        return {row.tier: (row.status, (row.metrics or {}).get("reason")) for row in rows}


def waiting(client: Client) -> dict[str, int]:
    with redis.Redis.from_url(client.settings.broker_url or "") as broker:
        return {queue: int(broker.llen(queue)) for queue in QUEUES}


def test_only_the_tiers_that_apply_are_sent(client: Client) -> None:
    client.put_task(review_task("reviews"))  # has reference outputs
    client.submit(run("with-trace", "reviews", trace=review_trace()))

    assert tier_rows(client, "with-trace") == {
        "judge": ("skipped", "no judge configured (EVALQ_JUDGE_MODEL unset)")
    }
    assert waiting(client) == {
        "evalq.text": 1,
        "evalq.judge": 0,
        "evalq.graph": 1,
        "evalq.merge": 0,
        "evalq.webhooks": 0,  # no webhooks: the merge sends no event
    }


def evaluation(client: Client, sid: str) -> tuple[str, int] | None:
    """The stored evaluation's status and merge count, if merged."""
    with session_scope(client.url) as session:
        row = session.get(EvaluationRow, sid)
        return None if row is None else (row.status, row.merge_count)


def test_with_no_tier_to_run_it_is_merged_at_intake(client: Client) -> None:
    client.put_task({"id": "bare", "category": "debugging"})  # no references; the run no trace
    client.submit(run("nothing", "bare"))

    assert tier_rows(client, "nothing") == {
        "text": ("skipped", "the task has no reference outputs"),
        "judge": ("skipped", "no judge configured (EVALQ_JUDGE_MODEL unset)"),
        "graph": ("skipped", "the submission has no trace"),
    }
    assert client.status("nothing") == "done"
    assert evaluation(client, "nothing") == ("done", 1)
    assert standing_ids(client, "bare") == ["nothing"]
    assert waiting(client) == {
        "evalq.text": 0,
        "evalq.judge": 0,
        "evalq.graph": 0,
        "evalq.merge": 1,  # the task's first baseline refresh (claimed by this merge)
        "evalq.webhooks": 0,  # no webhooks: no event
    }
    assert queued_names(client) == [REFRESH_TASK]


def test_a_trace_alone_is_scored_at_intake(client: Client) -> None:
    client.put_task({"id": "bare", "category": "debugging"})  # no references, no judge
    client.submit(run("traced", "bare", trace=review_trace()))

    rows = tier_rows(client, "traced")
    assert rows["graph"] == ("ok", None)
    assert evaluation(client, "traced") == ("done", 1)
    with session_scope(client.url) as session:
        graph = queries.tier_results(session, submission_id="traced")["graph"]
        job = queries.load_job(session, submission_id="traced", settings=client.settings)
        assert graph.metrics is not None
        assert graph.metrics == compute_graph(job).stored()[0]  # what the graph worker stores
    assert waiting(client)["evalq.graph"] == 0


def test_a_batch_claims_one_refresh_and_a_resubmit_merges_nothing_again(client: Client) -> None:
    client.put_task({"id": "bare", "category": "debugging"})
    client.submit_many([run(f"n{i}", "bare") for i in range(5)])
    again = client.submit_many([run(f"n{i}", "bare") for i in range(5)])

    assert [s.created for s in again] == [False] * 5
    assert [evaluation(client, f"n{i}") for i in range(5)] == [("done", 1)] * 5
    assert queued_names(client) == [REFRESH_TASK]  # one refresh for the batch; no chord at all


def test_merged_at_intake_scores_as_the_merge_task_does(client: Client) -> None:
    client.put_task({"id": "bare", "category": "debugging"})
    client.submit(run("intake", "bare", trace=review_trace()))
    with session_scope(client.url) as session:
        job = queries.load_job(session, submission_id="intake", settings=client.settings)
        current = current_baseline(session, task_id="bare", profile=job.profile)
        tiers = {
            outcome.tier: outcome
            for outcome in map(
                queries.tier_outcome, queries.tier_results(session, submission_id="intake").values()
            )
            if outcome is not None
        }
        stored = session.get(EvaluationRow, "intake")
        assert stored is not None
        at_intake = stored.scores
        record_evaluation(session, job, tiers, current, claim_refresh=False)  # the merge's way
    with session_scope(client.url) as session:
        merged = session.get(EvaluationRow, "intake")
        assert merged is not None
        assert merged.merge_count == 2
        assert merged.scores == at_intake


def standing_ids(client: Client, task_id: str) -> list[str]:
    with session_scope(client.url) as session:
        return list(
            session.scalars(select(StandingRow.submission_id).where(StandingRow.task_id == task_id))
        )


def queued_names(client: Client) -> list[str]:
    """The task names of every message waiting in the broker, by queue order."""
    names = []
    with redis.Redis.from_url(client.settings.broker_url or "") as broker:
        for queue in QUEUES:
            for raw in broker.lrange(queue, 0, -1):
                names.append(json.loads(raw)["headers"]["task"])
    return names


def test_a_configured_judge_is_sent(client: Client, tmp_path: Path) -> None:
    judged = Client(client.settings.model_copy(update={"judge_model": "test"}), app=client.app)
    judged.put_task({"id": "bare", "category": "debugging"})
    judged.submit(run("judged", "bare"))

    # tier 1 goes too: without references it reads the output for instructions to the judge
    assert set(tier_rows(client, "judged")) == {"graph"}
    assert waiting(client)["evalq.judge"] == 1
    assert waiting(client)["evalq.text"] == 1
