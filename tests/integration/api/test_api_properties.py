"""Generated requests against the real server: never a 5xx, and a rejected one stores nothing."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.integration.api.conftest import Server, example_task, examples, submission

EXAMPLES = 1000
"""Per backend: 2,000 requests with SQLite and PostgreSQL."""
BASES = [
    submission("p-base"),
    *examples("suite")[:1],
    *examples("scylla")[:1],
    *examples("arena")[:2],
]
TASK_BASES = [{"category": "debugging"}, example_task("suite-refund-agent")]
STRANGE = st.sampled_from(["\ud800", "a\x00b", "ünïcödé", "🙂" * 3, "", " ", "T0", "t1", "../t1"])
TEXT = st.text(max_size=12) | STRANGE
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | TEXT
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=10,
)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path into a JSON value (dict keys and list indices)."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths(item, (*prefix, index))


@st.composite
def mutated(draw: st.DrawFn, bases: list[dict[str, Any]]) -> Any:
    """A valid body with 0-3 values replaced by arbitrary JSON or removed."""
    value: Any = copy.deepcopy(draw(st.sampled_from(bases)))
    for _ in range(draw(st.integers(0, 3))):
        path = draw(st.sampled_from(list(paths(value))))
        if not path:
            value = draw(JSON)
            continue
        parent = value
        for part in path[:-1]:
            parent = parent[part]
        if draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(JSON)
    if isinstance(value, dict) and "id" in value and isinstance(value["id"], str):
        value["id"] = value["id"] + draw(st.sampled_from(["", "-x", "-y"]))
    return value


def encode(value: Any) -> bytes:
    """JSON bytes; ASCII escapes keep lone surrogates representable."""
    return json.dumps(value).encode()


def url_quote(text: str) -> str:
    return quote(text, safe="", errors="surrogatepass")


BODIES = (
    mutated(BASES).map(encode)
    | st.lists(mutated(BASES), min_size=1, max_size=4).map(lambda s: encode({"submissions": s}))
    | JSON.map(encode)
    | st.binary(max_size=64)
    | st.sampled_from([b"", b"{", b'{"id": NaN}', b"[" * 5000, b'{"a": 1e999}', b"\xff\xfe"])
)


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, str, dict[str, str], bytes | None]:
    """(method, path, headers, body) of a request to some evalq route."""
    ident = url_quote(draw(TEXT | st.sampled_from(["t1", "p-base", "suite-refund-agent"])))
    method, path = draw(
        st.sampled_from(
            [
                ("POST", "/v1/submissions"),
                ("POST", "/v1/submissions"),
                ("PUT", f"/v1/tasks/{ident}"),
                ("PUT", f"/v1/tasks/{ident}/baseline"),  # 405: never a task named "x/baseline"
                ("GET", f"/v1/submissions/{ident}"),
                ("GET", f"/v1/tasks/{ident}/leaderboard"),
                ("GET", f"/v1/tasks/{ident}/baseline"),
                ("GET", f"/v1/tasks/{ident}/variants"),
                ("GET", f"/v1/tasks/{ident}/suite"),
            ]
        )
    )
    if method == "PUT":
        body: bytes | None = draw(mutated(TASK_BASES).map(encode) | BODIES)
    else:
        body = draw(BODIES) if method == "POST" else None
    if method == "GET" and path.endswith("leaderboard") and draw(st.booleans()):
        path += "?" + "&".join(f"{k}={url_quote(draw(TEXT))}" for k in ("tool", "variant"))
    headers = {}
    key = draw(st.sampled_from(["rw", "rw", "rw", "read", "write", None, "garbage"]))
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"  # replaced by the real secret in the test
    content_type = draw(
        st.sampled_from(
            ["application/json"] * 4 + ["application/json; charset=utf-8", "text/plain", ""]
        )
    )
    if content_type:
        headers["Content-Type"] = content_type
    return method, path, headers, body


@pytest.mark.slow
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)
@given(request=requests())
def test_generated_requests_never_fail_the_server(
    api: Server, request: tuple[str, str, dict[str, str], bytes | None]
) -> None:
    method, path, headers, body = request
    key = headers.get("Authorization", "").removeprefix("Bearer ")
    if key in api.keys:
        headers = headers | {"Authorization": f"Bearer {api.keys[key]}"}
    before = api.counts()
    keyless = [c for c in api.clients if "authorization" not in c.headers]
    client = keyless[0] if keyless else api.client(key=None)  # one connection for every example
    response = client.request(method, path, headers=headers, content=body)
    assert response.status_code < 500, (request, response.text)
    if response.status_code >= 400:
        assert api.counts() == before, (request, response.text)
    scope = "read" if method == "GET" else "write"
    if response.status_code == 405 or response.is_redirect:
        return  # no route matched, or Starlette's trailing-slash redirect (an empty body)
    if response.json() == {"detail": "Not Found"}:
        return  # no route matched (e.g. a newline in an id, a "." segment httpx drops)
    if not key or key not in api.keys:
        assert response.status_code == 401
    elif scope not in {"rw": "read,write", "read": "read", "write": "write"}[key]:
        assert response.status_code == 403
        assert api.counts() == before
    if response.status_code == 422:
        detail = response.json()["detail"]
        assert detail and all(set(p) == {"field", "rule"} for p in detail)
        assert len(detail) <= 50 and set(response.json()) <= {"detail", "more"}
