"""The Python client reads profiles from the settings it is given, at every step."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.databases import fresh_database

from evalq.core.errors import InvalidInput, NotFound
from evalq.core.settings import Settings, get_settings
from evalq.producer.client import Client
from evalq.store import queries
from evalq.store.db import session_scope

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
