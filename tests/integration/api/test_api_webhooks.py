"""Webhook routes over a real `evalq api` process on the shipped defaults: receivers must be
public (test_api_webhook_delivery.py delivers to a local one, with the development setting)."""

from __future__ import annotations

from typing import Any

import pytest

from evalq.core.receivers import PRIVATE_RULE, UNRESOLVED_RULE
from evalq.core.webhooks import URL_RULE
from tests.integration.api.conftest import TASK, Server

HOOKS = f"/v1/tasks/{TASK['id']}/webhooks"


def register(api: Server, url: str, **extra: Any) -> dict[str, Any]:
    answer = api.client().post(HOOKS, json={"url": url, **extra})
    assert answer.status_code == 201, answer.text
    created: dict[str, Any] = answer.json()
    return created


def test_the_secret_is_shown_once_and_never_listed(api: Server) -> None:
    created = register(api, "https://93.184.215.14/evalq?team=7", description="team 7")
    assert created["secret"].startswith("whsec_") and created["id"].startswith("wh_")
    assert created["created_by"] == "rw" and created["description"] == "team 7"
    listed = api.client("read").get(HOOKS)
    assert listed.status_code == 200
    [mine] = [h for h in listed.json()["webhooks"] if h["id"] == created["id"]]
    assert mine == {k: v for k, v in created.items() if k != "secret"}
    assert created["secret"] not in listed.text and "secret" not in listed.text
    deliveries = api.client("read").get(f"{HOOKS}/{created['id']}/deliveries")
    assert deliveries.status_code == 200 and deliveries.json() == {"deliveries": []}
    assert created["secret"] not in api.log.read_text(errors="replace")


@pytest.mark.parametrize(
    "url",
    [
        "ftp://hooks.example.com/x",
        "hooks.example.com/x",
        "/relative/path",
        "http://",
        "https://hooks.example.com/x#part",
        "http://hooks.example.com:99999/x",
        "javascript:alert(1)",
        "http://hooks example.com/",
    ],
)
def test_a_bad_url_is_a_422_naming_url_and_stores_nothing(api: Server, url: str) -> None:
    before = api.counts()
    answer = api.client().post(HOOKS, json={"url": url})
    assert answer.status_code == 422, answer.text
    assert answer.json() == {"detail": [{"field": "url", "rule": URL_RULE}]}
    assert api.counts() == before


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "url"),
        ({"url": 7}, "url"),
        ({"url": "https://x.example/" + "a" * 2000}, "url"),
        ({"url": "https://x.example/", "secret": "mine"}, "secret"),
        ({"url": "https://x.example/", "description": "d" * 501}, "description"),
        ([], "(root)"),
    ],
)
def test_a_bad_body_is_a_422_naming_the_field(api: Server, body: Any, field: str) -> None:
    before = api.counts()
    answer = api.client().post(HOOKS, json=body)
    assert answer.status_code == 422, answer.text
    assert [p["field"] for p in answer.json()["detail"]] == [field]
    assert api.counts() == before


def test_scopes_unknown_tasks_and_removal(api: Server) -> None:
    assert api.client("read").post(HOOKS, json={"url": "https://x.example/"}).status_code == 403
    assert api.client(None).get(HOOKS).status_code == 401
    assert api.client().get("/v1/tasks/nope/webhooks").status_code == 404
    missing = api.client().post("/v1/tasks/nope/webhooks", json={"url": "https://1.1.1.1/"})
    assert missing.status_code == 404
    created = register(api, "https://93.184.215.14/removed")
    assert api.client("read").delete(f"{HOOKS}/{created['id']}").status_code == 403
    removed = api.client("write").delete(f"{HOOKS}/{created['id']}")
    assert removed.status_code == 200
    assert removed.json() == {"id": created["id"], "task_id": TASK["id"], "removed": True}
    assert created["id"] not in api.client().get(HOOKS).text
    assert api.client().delete(f"{HOOKS}/{created['id']}").status_code == 404
    assert api.client().get(f"{HOOKS}/{created['id']}/deliveries").status_code == 404


@pytest.mark.parametrize(
    ("url", "rule"),
    [
        ("http://127.0.0.1:8080/hook", PRIVATE_RULE),
        ("http://localhost/hook", PRIVATE_RULE),
        ("http://169.254.169.254/latest/meta-data", PRIVATE_RULE),
        ("http://[::1]/hook", PRIVATE_RULE),
        ("http://2130706433/", PRIVATE_RULE),
        ("http://0x7f000001/", PRIVATE_RULE),
        ("http://[::ffff:127.0.0.1]/", PRIVATE_RULE),
        ("http://10.0.0.8/", PRIVATE_RULE),
        ("http://100.64.0.1/", PRIVATE_RULE),
        ("http://0.0.0.0/", PRIVATE_RULE),
        ("http://[fd00::1]/", PRIVATE_RULE),
        ("https://no-such-host.invalid/hook", UNRESOLVED_RULE),
    ],
)
def test_a_receiver_that_is_not_public_is_a_422_naming_url_and_stores_nothing(
    api: Server, url: str, rule: str
) -> None:
    before = api.counts()
    answer = api.client().post(HOOKS, json={"url": url})
    assert answer.status_code == 422, answer.text
    assert answer.json() == {"detail": [{"field": "url", "rule": rule}]}
    assert api.counts() == before


def test_a_body_that_is_not_json_is_a_415_the_document_names(api: Server) -> None:
    answer = api.client().post(HOOKS, content=b"url=x", headers={"content-type": "text/plain"})
    assert answer.status_code == 415, answer.text
    document = api.client().get("/openapi.json").json()
    assert "415" in document["paths"]["/v1/tasks/{task_id}/webhooks"]["post"]["responses"]
