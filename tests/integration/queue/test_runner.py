"""A tier task's store work: one database session, a transaction to claim and one to store."""

from __future__ import annotations

from typing import Any

import pytest
from celery import Celery
from sqlalchemy import event
from sqlalchemy.orm import Session
from tests.support.settings import configure

from evalq.core.results import TierOutcome
from evalq.core.settings import Settings
from evalq.service.client import Client
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.store.queries import Job
from evalq.tasks.runner import run_tier

pytestmark = pytest.mark.both_databases  # the database matters here (tests/conftest.py)

TASK = {
    "id": "t1",
    "category": "debugging",
    "success_criteria": [{"type": "no_errors"}],
    "reference_outputs": ["Fixed the date parser and added a regression test."],
}
USAGE = {"input_tokens": 800, "output_tokens": 200, "tool_calls": 3, "execution_time": 12}
RUN = {"id": "r1", "task_id": "t1", "tool": "aider", "model": "gpt-4o", "output": "Fixed it."}


def test_a_tier_task_opens_one_session_for_its_two_transactions(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(monkeypatch, database_url=db_url)
    client = Client(Settings(database_url=db_url))  # in-process: publishes to no one yet
    client.put_task(TASK)
    client.submit(RUN | {"usage": USAGE})
    app = Celery("runner-test", set_as_current=False)
    computed: list[Job] = []

    def compute(job: Job) -> TierOutcome:
        computed.append(job)
        return TierOutcome(tier="text", status="skipped", reason="a test's compute")

    @app.task(bind=True, shared=False)  # one per case: never in every later app
    def probe(self: Any, submission_id: str) -> dict[str, str]:
        return run_tier(self, submission_id, "text", compute)

    sessions: list[int] = []

    def begun(session: Session, *_: Any) -> None:
        sessions.append(id(session))

    event.listen(Session, "after_begin", begun)
    try:
        marker = probe.apply(args=["r1"]).get()
    finally:
        event.remove(Session, "after_begin", begun)
    assert marker == {"submission_id": "r1", "tier": "text", "status": "skipped"}
    assert [job.submission.id for job in computed] == ["r1"]
    # was two sessions: one to claim the tier and load the job, another to store the outcome
    assert len(sessions) == 2 and len(set(sessions)) == 1, sessions
    with session_scope(db_url) as session:
        row = queries.tier_results(session, submission_id="r1")["text"]
        assert (row.status, row.deliveries) == ("skipped", 1)
