"""`HttpClient.plan` asks GET /v1/tasks/{id}/plan with the difference to detect."""

from __future__ import annotations

from evalq.producer.http import wire


def test_the_plan_call_names_the_task_and_the_difference() -> None:
    call = wire.plan_call("scylla-token-bucket", detect=0.25)
    assert (call.method, call.path) == ("GET", "/v1/tasks/scylla-token-bucket/plan")
    assert dict(call.params or {}) == {"detect": "0.25"}
    assert wire.plan_call("t").params == wire.plan_call("t", detect=None).params
