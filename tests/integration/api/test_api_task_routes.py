"""Task ids are one path segment, and the OpenAPI document refuses what the API refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalq.core.errors import InvalidInput
from evalq.core.settings import Settings
from evalq.producer.api.app import create_app
from evalq.producer.http import HttpClient
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.store.models import TaskRow
from tests.integration.api.conftest import Server, submission

REPORTS = ("baseline", "leaderboard", "variants", "suite")


@pytest.mark.parametrize("report", REPORTS)
def test_put_on_a_report_path_is_405_and_stores_nothing(api: Server, report: str) -> None:
    """It used to create a task called ``0/baseline``."""
    before = api.counts()
    response = api.client().put(f"/v1/tasks/0/{report}", json={"category": "debugging"})
    assert response.status_code == 405, response.text
    assert api.counts() == before


def test_a_task_id_with_a_slash_is_refused_naming_the_field(api: Server) -> None:
    client = api.client()
    before = api.counts()
    put = client.put("/v1/tasks/x", json={"id": "x/y"})
    assert put.status_code == 422
    assert {"field": "id", "rule": "must equal the task id in the path ('x')"} in put.json()[
        "detail"
    ]
    sent = client.post("/v1/submissions", json=submission("slash-1", task_id="a/b"))
    assert sent.status_code == 422
    assert sent.json()["detail"] == [
        {"field": "task_id", "rule": "Value error, a task id must not contain '/'"}
    ]
    assert api.counts() == before


@pytest.mark.parametrize("sid", ["a/../b", "run/1"])
def test_a_submission_id_with_a_slash_is_refused_naming_the_field(api: Server, sid: str) -> None:
    """``a/../b`` was accepted, and its ``url`` (``/v1/submissions/a/../b``) was a 404."""
    rule = "Value error, a submission id must not contain '/'"
    before = api.counts()
    client = api.client()
    one = client.post("/v1/submissions", json=submission(sid))
    assert one.status_code == 422, one.text
    assert one.json()["detail"] == [{"field": "id", "rule": rule}]
    batch = client.post(
        "/v1/submissions", json={"submissions": [submission("fine-1"), submission(sid)]}
    )
    assert batch.status_code == 422, batch.text
    assert batch.json()["detail"] == [{"field": "submissions.1.id", "rule": rule}]
    with HttpClient(api.url, api.keys["rw"]) as http, pytest.raises(InvalidInput) as caught:
        http.submit(submission(sid))
    assert dict(caught.value.problems) == {"id": rule}
    assert api.counts() == before


def test_a_task_stored_with_a_slash_before_the_rule_still_loads(api: Server) -> None:
    with session_scope(api.db_url) as session:
        session.add(TaskRow(id="legacy/t", definition={"id": "legacy/t"}, content_hash="0" * 64))
    with session_scope(api.db_url) as session:
        assert queries.get_task(session, task_id="legacy/t").id == "legacy/t"


def test_the_document_refuses_an_empty_usage_as_the_api_does(api: Server) -> None:
    served = api.client().get("/openapi.json").json()
    usage = served["components"]["schemas"]["Usage"]
    assert not any(set(branch["required"]) <= set() for branch in usage["anyOf"])
    response = api.client().post("/v1/submissions", json=submission("u-empty", usage={}))
    assert response.status_code == 422
    assert [p["field"] for p in response.json()["detail"]] == ["usage"]


def test_the_document_lists_the_profiles_the_api_accepts(api: Server, tmp_path: Path) -> None:
    served = api.client().get("/openapi.json").json()
    assert served["components"]["schemas"]["Task"]["properties"]["profile"]["enum"] == ["default"]
    response = api.client().put("/v1/tasks/prof-1", json={"profile": "nope"})
    assert response.status_code == 422
    assert [p["field"] for p in response.json()["detail"]] == ["profile"]
    (tmp_path / "strict.toml").write_text("")
    (tmp_path / "not a name.toml").write_text("")
    settings = Settings(broker_url="memory://", profile_dir=tmp_path)
    document = create_app(settings).openapi()
    assert document["components"]["schemas"]["Task"]["properties"]["profile"]["enum"] == [
        "default",
        "strict",
    ]
