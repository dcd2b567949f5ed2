"""Path and query values the store cannot hold are refused with a 422 naming the parameter, on
both databases, at every route of the API and the UI (`evalq.producer.api.params`).

The fifth probe found a NUL in a path or query value answering 500 with a traceback on
PostgreSQL (which cannot hold it) and 404 or 200 on SQLite.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from evalq.core.storable import NUL_RULE
from tests.integration.api.conftest import Server
from tests.support.processes import HTTP_TIMEOUT
from tests.support.ui import sign_in

pytestmark = pytest.mark.both_databases  # PostgreSQL cannot hold a NUL; SQLite can

NUL = "%00"
REPORTED = [
    ("GET", f"/v1/labels?labeller=a{NUL}", "labeller"),
    ("GET", f"/v1/traces/{'0' * 31}{NUL}", "trace_id"),
    ("GET", f"/ui/runs/r{NUL}1", "submission_id"),
    ("GET", f"/ui/tasks/t{NUL}1", "task_id"),
    ("GET", f"/ui/labels?task=t{NUL}", "task"),
    ("GET", f"/ui/tasks/t1?model=m{NUL}", "model"),
    ("GET", f"/ui/review/accept?submission_id=s{NUL}", "submission_id"),
]
UI_PATHS = [  # every UI route (none is in the OpenAPI document), each path parameter filled
    ("GET", "/"),
    ("GET", "/ui/tasks/{task_id}"),
    ("GET", "/ui/runs/{submission_id}"),
    ("GET", "/ui/review"),
    ("GET", "/ui/review/{action}"),
    ("POST", "/ui/review/{action}"),
    ("GET", "/ui/compare"),
    ("GET", "/ui/events"),
    ("GET", "/ui/labels"),
    ("POST", "/ui/labels"),
    ("GET", "/ui/login"),
    ("POST", "/ui/login"),
    ("POST", "/ui/logout"),
    ("GET", "/ui/static/{path}"),
]
PARAMETER = re.compile(r"\{([^}:]+)(?::[^}]+)?\}")


@pytest.fixture(scope="module")
def browser(api: Server) -> httpx.Client:
    """A client signed in to the UI with the read-write key (and sending it to the API)."""
    client = api.client()
    assert sign_in(client, api.keys["rw"]).status_code == 303
    return client


def refused_for(answer: httpx.Response, *names: str) -> None:
    """``answer`` is the 422 naming each of ``names`` with the NUL rule."""
    assert answer.status_code == 422, (answer.request.url, answer.status_code, answer.text)
    detail = answer.json()["detail"]
    assert {item["field"] for item in detail} == set(names), detail
    assert {item["rule"] for item in detail} == {NUL_RULE}, detail


@pytest.mark.parametrize(("method", "url", "name"), REPORTED)
def test_the_reported_values_are_refused(
    api: Server, browser: httpx.Client, method: str, url: str, name: str
) -> None:
    before = api.counts()
    refused_for(browser.request(method, url), name)
    assert api.counts() == before


def test_a_live_poll_is_refused_before_it_reads_the_store(
    api: Server, browser: httpx.Client
) -> None:
    """The live pages' 304 fast path reads the store before any route runs."""
    poll = {"x-evalq-live": "1", "if-none-match": 'W/"x"'}
    for url in (f"/ui/tasks/t{NUL}", f"/ui/runs/r{NUL}"):
        answer = browser.get(url, headers=poll)
        refused_for(answer, "task_id" if "tasks" in url else "submission_id")
        assert "content-security-policy" in answer.headers  # a UI answer like the others


def test_every_documented_parameter_of_every_operation_is_checked(
    api: Server, browser: httpx.Client
) -> None:
    """Each path parameter and each query parameter of each operation, one at a time."""
    document: dict[str, Any] = browser.get("/openapi.json").json()
    tried = 0
    for template, operations in document["paths"].items():
        for method, operation in operations.items():
            for parameter in operation.get("parameters", []):
                name, where = parameter["name"], parameter["in"]
                if where not in ("path", "query"):
                    continue
                path = template
                for other in PARAMETER.findall(template):
                    value = f"a{NUL}" if where == "path" and other == name else "t1"
                    path = path.replace(f"{{{other}}}", value)
                query = f"?{name}=a{NUL}" if where == "query" else ""
                refused_for(browser.request(method.upper(), path + query), name)
                tried += 1
    assert tried >= 55, tried


def test_every_ui_route_is_checked(api: Server, browser: httpx.Client) -> None:
    for method, template in UI_PATHS:
        names = PARAMETER.findall(template)
        path = PARAMETER.sub(f"a{NUL}", template)
        refused_for(browser.request(method, path), *names) if names else None
        refused_for(browser.request(method, f"{template}?q=x{NUL}&page=1"), "q")


def test_the_key_check_comes_first(api: Server) -> None:
    """No key or an unknown one: 401; a key without the method's scope: 403; no session on a
    page: the sign-in (as for any other bad input)."""
    url = f"/v1/labels?labeller=a{NUL}"
    assert api.client(key=None).get(url).status_code == 401
    with httpx.Client(
        base_url=api.url, headers={"Authorization": "Bearer evq_nope"}, timeout=HTTP_TIMEOUT
    ) as bogus:
        assert bogus.get(url).status_code == 401
    refused = api.client("read").post(f"/v1/tasks/t{NUL}/webhooks", json={"url": "x"})
    assert refused.status_code == 403, refused.text
    written = api.client("write").get(url)
    assert written.status_code == 403, written.text
    with httpx.Client(base_url=api.url, timeout=HTTP_TIMEOUT) as anonymous:
        page = anonymous.get(f"/ui/tasks/t{NUL}", follow_redirects=False)
        assert page.status_code == 303 and page.headers["location"].startswith("/ui/login")


def test_a_path_no_route_serves_is_refused_as_the_path(browser: httpx.Client) -> None:
    refused_for(browser.get(f"/nowhere/a{NUL}"), "(path)")


def test_values_the_store_can_hold_pass(browser: httpx.Client) -> None:
    """Accents, emoji and an encoded percent sign are values like any other."""
    for value in ("%C3%A9t%C3%A9", "%F0%9F%99%82", "100%25"):
        assert browser.get(f"/v1/labels?labeller={value}").status_code == 200
        assert browser.get(f"/v1/tasks/{value}/baseline").status_code == 404
        assert browser.get(f"/ui/tasks/{value}").status_code == 404


def test_a_webhooks_body_holding_a_nul_is_refused_naming_the_field(api: Server) -> None:
    """The long schemathesis run's one 500 (PostgreSQL): a NUL in a webhook's description."""
    before = api.counts()
    client = api.client()
    for body, field in (
        ({"url": "https://hooks.test/x", "description": "a\x00b"}, "description"),
        ({"url": "https://hooks.test/x\x00"}, "url"),
    ):
        answer = client.post("/v1/tasks/t1/webhooks", json=body)
        assert answer.status_code == 422, answer.text
        assert [p["field"] for p in answer.json()["detail"]] == [field], answer.text
    assert api.counts() == before
