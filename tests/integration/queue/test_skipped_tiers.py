"""A tier that cannot apply is stored as skipped at submit and never sent to a worker."""

from __future__ import annotations

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
from evalq.service.client import Client
from evalq.store.db import session_scope
from evalq.store.models import TierResultRow
from evalq.workers.names import QUEUES

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


def test_with_no_tier_to_run_the_merge_is_sent_alone(client: Client) -> None:
    client.put_task({"id": "bare", "category": "debugging"})  # no references; the run no trace
    client.submit(run("nothing", "bare"))

    assert tier_rows(client, "nothing") == {
        "text": ("skipped", "the task has no reference outputs"),
        "judge": ("skipped", "no judge configured (EVALQ_JUDGE_MODEL unset)"),
        "graph": ("skipped", "the submission has no trace"),
    }
    assert waiting(client) == {
        "evalq.text": 0,
        "evalq.judge": 0,
        "evalq.graph": 0,
        "evalq.merge": 1,
        "evalq.webhooks": 0,  # no webhooks: the merge sends no event
    }


def test_a_configured_judge_is_sent(client: Client, tmp_path: Path) -> None:
    judged = Client(client.settings.model_copy(update={"judge_model": "test"}), app=client.app)
    judged.put_task({"id": "bare", "category": "debugging"})
    judged.submit(run("judged", "bare"))

    assert set(tier_rows(client, "judged")) == {"text", "graph"}
    assert waiting(client)["evalq.judge"] == 1
