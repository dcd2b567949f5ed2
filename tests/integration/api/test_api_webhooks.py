"""Webhook routes over a real `evalq api` process, and an event delivered end to end."""

from __future__ import annotations

from typing import Any

import pytest

from evalq.core.webhooks import URL_RULE
from evalq.producer.client import Client
from evalq.workers.bootstrap import worker_app
from evalq.workers.embedded import embedded_worker
from tests.integration.api.conftest import TASK, Server, submission
from tests.support.processes import wait_until
from tests.support.webhook_receiver import webhook_receiver

HOOKS = f"/v1/tasks/{TASK['id']}/webhooks"


def register(api: Server, url: str, **extra: Any) -> dict[str, Any]:
    answer = api.client().post(HOOKS, json={"url": url, **extra})
    assert answer.status_code == 201, answer.text
    created: dict[str, Any] = answer.json()
    return created


def test_the_secret_is_shown_once_and_never_listed(api: Server) -> None:
    created = register(api, "https://hooks.example.com/evalq?team=7", description="team 7")
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
    missing = api.client().post("/v1/tasks/nope/webhooks", json={"url": "https://x.example/"})
    assert missing.status_code == 404
    created = register(api, "https://x.example/removed")
    assert api.client("read").delete(f"{HOOKS}/{created['id']}").status_code == 403
    removed = api.client("write").delete(f"{HOOKS}/{created['id']}")
    assert removed.status_code == 200
    assert removed.json() == {"id": created["id"], "task_id": TASK["id"], "removed": True}
    assert created["id"] not in api.client().get(HOOKS).text
    assert api.client().delete(f"{HOOKS}/{created['id']}").status_code == 404
    assert api.client().get(f"{HOOKS}/{created['id']}/deliveries").status_code == 404


def test_an_evaluation_posted_over_http_is_delivered_and_listed(api: Server) -> None:
    with webhook_receiver() as receiver:
        created = register(api, receiver.url)
        receiver.secret = created["secret"]
        posted = api.client().post("/v1/submissions", json=submission("hook-1"))
        assert posted.status_code == 201, posted.text
        app = worker_app()
        try:
            with embedded_worker(app, concurrency=4):
                assert Client(app=app).wait(["hook-1"], timeout=120) == {"hook-1": "done"}
                path = f"{HOOKS}/{created['id']}/deliveries"

                def delivered() -> bool:
                    found = api.client().get(path).json()["deliveries"]
                    return any(d["status"] == "delivered" for d in found)

                wait_until(delivered, timeout=60, what="the event to be delivered")
        finally:
            app.close()
    [delivery] = api.client("read").get(path).json()["deliveries"]
    assert delivery["submission_id"] == "hook-1" and delivery["attempts"] == 1
    assert delivery["last_status_code"] == 204 and delivery["last_error"] is None
    assert delivery["event"] == "evaluation.completed" and delivery["delivered_at"]
    [received] = receiver.received
    assert received.error is None and received.headers["webhook-id"] == delivery["id"]
    result = api.client("read").get("/v1/submissions/hook-1").json()
    assert received.verified["data"]["id"] == result["id"] == "hook-1"
    assert received.verified["data"]["tiers"] == result["tiers"]
    # the other webhooks of the task (registered by earlier tests) were told too
    assert created["secret"] not in api.client().get(HOOKS).text
