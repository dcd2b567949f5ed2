"""An evaluation posted over HTTP and delivered to a receiver on 127.0.0.1, end to end.

A loopback receiver is refused on the shipped defaults, so this module's `evalq api` runs with
the local-development setting EVALQ_WEBHOOK_ALLOW_PRIVATE=true.
"""

from __future__ import annotations

from evalq.service.client import Client
from evalq.workers.bootstrap import worker_app
from evalq.workers.embedded import embedded_worker
from tests.integration.api.conftest import Server, submission
from tests.integration.api.test_api_webhooks import HOOKS, register
from tests.support.processes import PATIENCE, wait_until
from tests.support.webhook_receiver import webhook_receiver

API_SETTINGS = {"webhook_allow_private": "true"}


def test_an_evaluation_posted_over_http_is_delivered_and_listed(api: Server) -> None:
    with webhook_receiver() as receiver:
        created = register(api, receiver.url)
        receiver.secret = created["secret"]
        posted = api.client().post("/v1/submissions", json=submission("hook-1"))
        assert posted.status_code == 201, posted.text
        app = worker_app()
        try:
            with embedded_worker(app, concurrency=4):
                assert Client(app=app).wait(["hook-1"], timeout=120 * PATIENCE) == {
                    "hook-1": "done"
                }
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
    assert created["secret"] not in api.client().get(HOOKS).text
