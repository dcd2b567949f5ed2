"""The Python client: profiles from the settings it is given, input held to the API's rules."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select
from tests.support.databases import fresh_database

from evalq.core.errors import InvalidInput, NotFound
from evalq.core.settings import Settings, get_settings
from evalq.core.storable import NUL_RULE, SURROGATE_RULE
from evalq.service.client import Client
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.store.models import SubmissionRow

HOUSE_PROFILE = """
[pricing]
"house-model" = { input_per_mtok = 1.0, output_per_mtok = 2.0 }
"""


@pytest.fixture
def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Client]:
    """A client whose settings name a profile directory the process settings do not know."""
    monkeypatch.delenv("EVALQ_PROFILE_DIR", raising=False)
    monkeypatch.delenv("EVALQ_PROFILE_PATH", raising=False)
    get_settings.cache_clear()
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "house.toml").write_text(HOUSE_PROFILE)
    with fresh_database("sqlite", tmp_path) as url:
        yield Client(Settings(database_url=url, profile_dir=profiles))
    get_settings.cache_clear()


def test_submit_prices_with_the_profile_of_the_settings_passed_in(client: Client) -> None:
    client.put_task({"id": "t", "category": "debugging", "profile": "house"})
    run = {
        "id": "r1",
        "task_id": "t",
        "tool": "aider",
        "model": "house-model",
        "usage": {"input_tokens": 1000, "output_tokens": 500, "tool_calls": 3},
    }
    assert client.submit(run).created
    with session_scope(client.url) as session:
        job = queries.load_job(session, submission_id="r1", settings=client.settings)
    # priced once, at submit, from house.toml: (1000 x 1 + 500 x 2) / 1e6
    assert job.cost_usd == pytest.approx(0.002)
    assert job.profile.pricing["house-model"].input_per_mtok == 1.0


def test_put_task_rejects_a_profile_the_settings_do_not_have(client: Client) -> None:
    with pytest.raises(InvalidInput) as caught:
        client.put_task({"id": "t", "category": "debugging", "profile": "nowhere"})
    assert [field for field, _ in caught.value.problems] == ["profile"]
    assert "nowhere" in str(caught.value)
    with session_scope(client.url) as session, pytest.raises(NotFound):
        queries.get_task(session, task_id="t")


@pytest.fixture
def plain_client(db_url: str) -> Iterator[Client]:
    """A client over a fresh SQLite or PostgreSQL store holding the task ``t``."""
    get_settings.cache_clear()
    client = Client(Settings(database_url=db_url))
    client.put_task({"id": "t", "category": "debugging"})
    yield client
    get_settings.cache_clear()


def run(sid: str, **changes: object) -> dict[str, object]:
    base = {"id": sid, "task_id": "t", "tool": "aider", "model": "gpt-4o"}
    return base | {"usage": {"total_tokens": 10}} | changes


def stored_ids(client: Client) -> set[str]:
    with session_scope(client.url) as session:
        return set(session.scalars(select(SubmissionRow.id)))


@pytest.mark.parametrize(
    ("changes", "field", "rule"),
    [
        ({"output": "a\x00b"}, "output", NUL_RULE),  # was stored (SQLite) or a DataError (PG)
        ({"tool": "a\x00b"}, "tool", NUL_RULE),
        ({"model": "gpt\ud8004o"}, "model", SURROGATE_RULE),
        ({"evidence": {"errors": ["x\x00"]}}, "evidence.errors.0", NUL_RULE),
    ],
)
def test_submit_refuses_what_the_store_cannot_hold(
    plain_client: Client, changes: dict[str, object], field: str, rule: str
) -> None:
    with pytest.raises(InvalidInput) as caught:
        plain_client.submit(run("r1", **changes))
    assert caught.value.problems == [(field, rule)]
    with pytest.raises(InvalidInput) as batch:
        plain_client.submit_many([run("r2"), run("r3", **changes)])
    assert batch.value.problems == [(f"[1].{field}", rule)]
    assert stored_ids(plain_client) == set()


def test_put_task_refuses_a_nul_and_stores_nothing(plain_client: Client) -> None:
    with pytest.raises(InvalidInput) as caught:
        plain_client.put_task({"id": "t2", "context": "paper\x00"})
    assert caught.value.problems == [("context", NUL_RULE)]
    with session_scope(plain_client.url) as session, pytest.raises(NotFound):
        queries.get_task(session, task_id="t2")


def test_unknown_tasks_are_worded_as_submit_words_them(plain_client: Client) -> None:
    assert plain_client.unknown_tasks(["t", "nope", "nope"]) == {
        "nope": "unknown task 'nope'; define it first"
    }
    with pytest.raises(InvalidInput) as caught:
        plain_client.submit(run("r1", task_id="nope"))
    assert caught.value.problems == [("task_id", "unknown task 'nope'; define it first")]
