"""The read side's fixture: the bundled examples evaluated once for these tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.support.at_rest import settle
from tests.support.databases import migrate_store
from tests.support.processes import PATIENCE
from tests.support.settings import configure

from evalq.core.schemas import Submission
from evalq.producer.cli import EXAMPLES
from evalq.producer.files import read_jsonl, read_tasks
from evalq.service.client import Client
from evalq.workers.bootstrap import worker_app
from evalq.workers.embedded import embedded_worker


@pytest.fixture(scope="package")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Every bundled example evaluated in-process (memory transport, SQLite), as `evalq demo`,
    handed over at rest (`settle`)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('kinds') / 'evalq.db'}"
    migrate_store(url)
    submissions: list[Submission] = []
    for path in sorted(EXAMPLES.glob("*.jsonl")):
        good, bad = read_jsonl(path)
        assert not bad
        submissions += [submission for _, submission in good]
    tasks = read_tasks(EXAMPLES / "tasks.json")
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.delenv("EVALQ_BROKER_URL", raising=False)
        monkeypatch.delenv("EVALQ_JUDGE_MODEL", raising=False)
        configure(monkeypatch, database_url=url)
        client = Client(app=worker_app())
        with embedded_worker(client.app):
            for task in tasks:
                client.put_task(task)
            ids = [r.id for r in client.submit_many(submissions)]
            assert set(client.wait(ids, timeout=600 * PATIENCE).values()) == {"done"}
        client.app.close()
        settle(url)  # the worker stopped: no refresh lands between two reads of a test
        yield url
    configure(pytest.MonkeyPatch())
