"""The OpenAPI document: served by the API, and committed as docs/openapi.json."""

from __future__ import annotations

import json

import httpx

from evalq.producer.api.openapi import render
from tests.integration.api.conftest import ROOT, Server
from tests.support.processes import HTTP_TIMEOUT

REGENERATE = "python -m evalq.producer.api.openapi > docs/openapi.json"


def test_the_committed_document_is_current() -> None:
    committed = (ROOT / "docs" / "openapi.json").read_text()
    assert committed == render(), f"docs/openapi.json is stale: run `{REGENERATE}`"


def test_the_server_serves_the_document_and_its_docs(api: Server) -> None:
    served = httpx.get(f"{api.url}/openapi.json", timeout=HTTP_TIMEOUT).json()
    assert served == json.loads((ROOT / "docs" / "openapi.json").read_text())
    submit = served["paths"]["/v1/submissions"]["post"]
    schema = submit["requestBody"]["content"]["application/json"]["schema"]
    assert {ref["$ref"] for ref in schema["oneOf"]} == {
        "#/components/schemas/Submission",
        "#/components/schemas/SubmissionBatch",
    }
    assert set(submit["responses"]) >= {"200", "201", "401", "403", "409", "413", "415", "422"}
    assert served["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    docs = httpx.get(f"{api.url}/docs", timeout=HTTP_TIMEOUT)
    assert docs.status_code == 200 and "swagger" in docs.text.lower()


def test_every_route_answers_with_a_named_schema() -> None:
    """No route's success body is an opaque object: each JSON body is a model in
    components/schemas; a route that answers another format (GET /metrics: Prometheus text)
    names that media type instead."""
    document = json.loads(render())
    schemas = document["components"]["schemas"]
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            success = next(code for code in operation["responses"] if code.startswith("2"))
            content = operation["responses"][success]["content"]
            if "application/json" not in content:
                assert list(content) == ["text/plain; version=1.0.0; charset=utf-8"], path
                continue
            body = content["application/json"]["schema"]
            refs = [body] if "$ref" in body else body.get("anyOf", [])
            assert refs and all("$ref" in ref for ref in refs), (method, path, body)
            for ref in refs:
                assert ref["$ref"].removeprefix("#/components/schemas/") in schemas


def test_every_route_that_needs_a_key_documents_401_and_403() -> None:
    """GET /metrics needs a read key but documented only its 200."""
    document = json.loads(render())
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if "security" in operation:
                assert {"401", "403"} <= set(operation["responses"]), (method, path)


def test_every_route_that_takes_a_body_documents_its_refusals() -> None:
    """A body is refused as too large (413) or not in a media type the route reads (415) before
    the route sees it: every route with a request body says so."""
    document = json.loads(render())
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if "requestBody" in operation:
                assert {"413", "415"} <= set(operation["responses"]), (method, path)
