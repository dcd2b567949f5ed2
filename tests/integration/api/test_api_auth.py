"""API keys against the real server: 401 without a live key, 403 without the scope."""

from __future__ import annotations

import os
import subprocess

import httpx

from tests.integration.api.conftest import Server, submission
from tests.support.processes import EVALQ, HTTP_TIMEOUT, PATIENCE


def test_health_needs_no_key_and_reports_both_dependencies(api: Server) -> None:
    response = httpx.get(f"{api.url}/healthz", timeout=HTTP_TIMEOUT)
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"] == {"ok": True, "detail": api.db_url.split(":")[0].split("+")[0]}
    assert body["broker"]["ok"] is True


def test_every_other_route_needs_a_key(api: Server) -> None:
    anonymous = api.client(key=None)
    for method, path in (
        ("GET", "/v1/submissions/s1"),
        ("GET", "/v1/tasks/t1/leaderboard"),
        ("GET", "/v1/tasks/t1/baseline"),
        ("GET", "/v1/tasks/t1/variants"),
        ("GET", "/v1/tasks/t1/suite"),
        ("PUT", "/v1/tasks/t2"),
        ("POST", "/v1/submissions"),
    ):
        response = anonymous.request(method, path, json={"category": "debugging"})
        assert response.status_code == 401, (method, path)
        assert response.headers["www-authenticate"] == "Bearer"
        assert "missing API key" in response.json()["detail"]


def test_a_wrong_key_is_401_and_stores_nothing(api: Server) -> None:
    before = api.counts()
    wrong = httpx.post(
        f"{api.url}/v1/submissions",
        json=submission("s1"),
        headers={"Authorization": f"Bearer {api.keys['rw']}x"},
        timeout=HTTP_TIMEOUT,
    )
    assert wrong.status_code == 401
    assert wrong.json() == {"detail": "invalid or revoked API key"}
    assert api.counts() == before


def test_a_key_without_the_scope_is_403_and_changes_nothing(api: Server) -> None:
    before = api.counts()
    post = api.client("read").post("/v1/submissions", json=submission("s1"))
    assert post.status_code == 403 and "'write' scope" in post.json()["detail"]
    put = api.client("read").put("/v1/tasks/t2", json={"category": "debugging"})
    assert put.status_code == 403
    assert api.counts() == before
    read = api.client("write").get("/v1/tasks/t1/leaderboard")
    assert read.status_code == 403 and "'read' scope" in read.json()["detail"]
    assert api.client("read").get("/v1/tasks/t1/leaderboard").status_code == 200


def test_keys_cli_creates_lists_and_revokes(api: Server) -> None:
    env = {"EVALQ_DATABASE_URL": api.db_url, "PATH": "/usr/bin:/bin"}
    if "PYTHONPATH" in os.environ:  # the evalq under test, not whichever one is installed
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]

    def evalq(*args: str) -> str:
        done = subprocess.run(
            [EVALQ, "keys", *args], env=env, capture_output=True, text=True, timeout=120 * PATIENCE
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    secret = evalq("create", "--name", "ci", "--scopes", "read").strip()
    assert secret.startswith("evq_") and len(secret) > 40
    listing = evalq("list")
    assert "ci" in listing and secret not in listing
    client = httpx.Client(
        base_url=api.url, headers={"Authorization": f"Bearer {secret}"}, timeout=HTTP_TIMEOUT
    )
    with client:
        assert client.get("/v1/tasks/t1/baseline").status_code == 200
        evalq("revoke", "ci")
        assert client.get("/v1/tasks/t1/baseline").status_code == 401
    failed = subprocess.run(
        [EVALQ, "keys", "create", "--name", "ci"], env=env, capture_output=True, text=True
    )
    assert failed.returncode == 2 and "error:" in failed.stderr and "exists" in failed.stderr
