"""Where the real services the tests use are, and what to do when one is not there."""

from __future__ import annotations

import os
import socket

import pytest

REDIS_HOST, REDIS_PORT = "127.0.0.1", 6379
PG_HOST, PG_PORT = "127.0.0.1", 5432
PG_ADMIN_URL = os.environ.get(
    "EVALQ_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


def reachable(host: str, port: int) -> bool:
    """True when something accepts TCP connections on host:port."""
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def need(host: str, port: int, what: str) -> None:
    """Fail in CI (CI=true), skip locally, when a service the test needs is not reachable."""
    if reachable(host, port):
        return
    message = f"{what} is not reachable on {host}:{port}"
    if os.environ.get("CI") == "true":
        pytest.fail(message + " (CI=true: .ci/run must start it)")
    pytest.skip(message)
