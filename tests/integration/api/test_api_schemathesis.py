"""The OpenAPI document states the rules: generated requests (schemathesis) against the real
server get no 5xx and answers the document describes, a request the document allows is not
refused for a rule it hides, and a 405 names the path's methods in ``Allow``.

Bounded: `EXAMPLES` cases per operation and generation mode (a few hundred in all, about a
minute), over SQLite only (no answer checked here depends on the database).
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import jsonschema_rs
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.integration.api.conftest import Server, serve_api
from tests.support.processes import HTTP_TIMEOUT, PATIENCE

EXAMPLES = 10
"""Most cases per operation and mode: 25 operations x 2 modes x 10 = 500 at most."""
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
METHODS = {"get", "put", "post", "delete", "patch"}


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serve_api("sqlite", tmp_path_factory.mktemp("schemathesis")) as server:
        yield server


@pytest.fixture(scope="module")
def document(api: Server) -> dict[str, object]:
    served: dict[str, object] = httpx.get(f"{api.url}/openapi.json", timeout=HTTP_TIMEOUT).json()
    return served


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_generated_requests_get_no_5xx_and_documented_answers(
    api: Server, document: dict[str, object], mode: GenerationMode
) -> None:
    schema = schemathesis.openapi.from_dict(document)
    headers = {"Authorization": f"Bearer {api.keys['rw']}"}
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 25
    calls = 0
    for operation in operations:

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy(generation_mode=mode))
        def call(case: schemathesis.Case) -> None:
            nonlocal calls
            calls += 1
            case.call_and_validate(
                base_url=api.url, headers=headers, checks=CHECKS, timeout=30 * PATIENCE
            )

        try:
            call()
        except Unsatisfiable:  # nothing of it can be made invalid (GET /healthz)
            assert mode is GenerationMode.NEGATIVE, operation.label
    assert calls >= 5 * len(operations), calls


def parameter(document: dict[str, object], path: str, name: str) -> dict[str, object]:
    operation = document["paths"][path]["get"]  # type: ignore[index]
    found = next(p for p in operation["parameters"] if p["name"] == name)
    schema: dict[str, object] = found["schema"]
    return schema


def valid(schema: dict[str, object], value: object) -> bool:
    return bool(jsonschema_rs.validator_for(schema).is_valid(value))


def body_schema(document: dict[str, object], name: str) -> dict[str, object]:
    """A component schema, its references resolvable."""
    components = document["components"]
    return {"$ref": f"#/components/schemas/{name}", "components": components}


def test_the_rules_the_routes_enforce_are_in_the_document(
    api: Server, document: dict[str, object]
) -> None:
    """Each request the fourth probe found schema-valid yet refused with a 422 is now either
    refused by the document too, or accepted."""
    by = parameter(document, "/v1/compare", "by")
    assert valid(by, "model") and valid(by, "metadata.git_sha")
    for refused in ("0" * 200, "metadata.", "metadata.-x", "models"):
        assert not valid(by, refused), refused
    for path in ("/v1/compare", "/v1/judge/agreement"):
        tasks = parameter(document, path, "tasks")
        assert valid(tasks, "a1,arena-*") and not valid(tasks, "a1,") and not valid(tasks, " ")
    limit = parameter(document, "/v1/tasks/{task_id}/leaderboard", "limit")
    assert not valid(limit, 0) and not valid(limit, 1001) and valid(limit, 1000)
    assert not valid(parameter(document, "/v1/tasks/{task_id}/leaderboard", "offset"), -1)
    run = {"id": "p1", "task_id": "t1", "tool": "a", "model": "m", "usage": {"total_tokens": 1}}
    submission = body_schema(document, "Submission")
    assert valid(submission, run | {"planned_runs": 3, "variant": "T1"})
    assert valid(submission, run | {"planned_runs": None})
    assert not valid(submission, run | {"planned_runs": 3})  # a plan is a variant's
    assert not valid(submission, run | {"planned_runs": 3, "variant": None})
    labels = body_schema(document, "LabelBatch")
    assert not valid(labels, {"labels": [{"labeller": "0", "submission_id": "0"}]})
    scored = {"labeller": "0", "submission_id": "0", "scores": {"constructiveness": 0}}
    assert not valid(labels, {"labels": [scored]})
    webhook = body_schema(document, "WebhookRequest")
    assert not valid(webhook, {"url": ""}) and valid(webhook, {"url": "https://hooks.test/x"})
    backfill = body_schema(document, "BackfillRequest")
    assert not valid(backfill, {"since": "0001-01-01T00:00:00Z", "until": "2000-01-01T00:00:00Z"})
    rule = document["paths"]["/v1/tasks/{task_id}/trace-rule"]["put"]  # type: ignore[index]
    rule_schema = rule["requestBody"]["content"]["application/json"]["schema"]
    assert not valid(rule_schema, {"sample_rate": False})

    client = api.client()
    same = {"since": "2000-01-01T00:00:00Z", "until": "2000-01-01T00:00:00Z"}
    client.put("/v1/tasks/t1/trace-rule", json={}).raise_for_status()
    empty = client.post("/v1/tasks/t1/trace-rule/backfill", json=same)
    assert empty.status_code == 200, empty.text
    assert client.put("/v1/tasks/t1/trace-rule", json={"sample_rate": False}).status_code == 422
    # a number is no date-time in the document; pydantic read it as seconds (the fifth probe)
    for since in (0, 1.5e9):
        assert not valid(backfill, {"since": since, "until": "2000-01-01T00:00:00Z"})
        numeric = client.post("/v1/tasks/t1/trace-rule/backfill", json=same | {"since": since})
        assert numeric.status_code == 422, numeric.text
        assert [p["field"] for p in numeric.json()["detail"]] == ["since"]


def test_every_405_names_the_methods_of_its_path(api: Server, document: dict[str, object]) -> None:
    """``Allow`` lists every method the document gives the path, whichever router serves it
    (three paths answered an empty or partial ``Allow``)."""
    client = api.client()
    for path, operations in document["paths"].items():  # type: ignore[attr-defined]
        documented = {method.upper() for method in operations} & {m.upper() for m in METHODS}
        url = (
            path.replace("{task_id}", "t1")
            .replace("{submission_id}", "s")
            .replace("{webhook_id}", "w")
            .replace("{trace_id}", "0" * 32)
        )
        for method in sorted({m.upper() for m in METHODS} - documented | {"OPTIONS"}):
            if "{submission_id}" in path and method == "GET":
                continue  # an id may hold '/': GET /v1/submissions/{id} serves this path too
            answer = client.request(method, url)
            assert answer.status_code == 405, (method, path, answer.status_code)
            allowed = {m.strip() for m in answer.headers.get("allow", "").split(",")}
            # the review paths' Allow named GET too (the fifth probe): exactly the document's
            assert allowed - {"HEAD"} == documented, (method, path, answer.headers)


def test_the_traces_route_asks_for_a_key_before_it_reads_the_body(api: Server) -> None:
    """Without a key, any body: 401 (it answered 415 for a body of the wrong type first)."""
    anonymous = api.client(key=None)
    for headers in ({}, {"content-type": "text/plain"}, {"content-type": "application/json"}):
        answer = anonymous.post("/v1/traces", content=b"x", headers=headers)
        assert answer.status_code == 401, (headers, answer.text)


def test_a_task_put_without_an_id_is_documented_as_accepted(
    api: Server, document: dict[str, object]
) -> None:
    """The route takes the id from the path; the document required it in the body."""
    put = document["paths"]["/v1/tasks/{task_id}"]["put"]  # type: ignore[index]
    reference = put["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    body = body_schema(document, reference.rsplit("/", 1)[1])
    task = {"category": "debugging", "success_criteria": [{"type": "no_errors"}]}
    assert valid(body, task) and valid(body, task | {"id": "no-id-1"})
    answer = api.client().put("/v1/tasks/no-id-1", json=task)
    assert answer.status_code == 201, answer.text
    assert answer.json()["task"]["id"] == "no-id-1"
