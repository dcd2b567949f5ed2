"""Where the real services the tests use are, and what to do when one is not there.

A plain `pytest` uses the shared Redis on 127.0.0.1:6379, its databases picked by the
``EVALQ_TEST_*_REDIS_DB`` variables. Under pytest-xdist (`make test`) every worker process starts
a `redis-server` of its own on a free port the first time this module is imported, so workers
never flush each other's databases, whatever numbers the tests use; it ends with its worker, even
one that exits without running its exit handlers; ``EVALQ_TEST_REDIS_PORT``
names a server to use instead. PostgreSQL is shared: every test creates databases of its own
(tests/support/databases.py).
"""

from __future__ import annotations

import atexit
import ctypes
import ctypes.util
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

REDIS_HOST = "127.0.0.1"
PG_HOST, PG_PORT = "127.0.0.1", 5432
PG_ADMIN_URL = os.environ.get(
    "EVALQ_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
"""This pytest-xdist worker's id (``gw0``, ...), or empty outside xdist."""


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


PR_SET_PDEATHSIG = 1
"""Linux prctl(2): the signal a process gets when the thread that started it ends."""


def _end_with_parent() -> None:
    """In a child about to exec: ask the kernel to terminate it when its parent ends. An xdist
    worker that ends without running its `atexit` handlers (killed, or ended by ``os._exit``)
    left its `redis-server` running on the machine (seen after a stressed CI run)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _worker_redis() -> int:
    """Start this xdist worker's own `redis-server` (no persistence) and return its port.

    It is stopped when the worker exits, and terminated by the kernel when the worker ends
    without exit handlers (`_end_with_parent`; the module is imported in the worker's main
    thread); its directory is a fresh temporary one.
    """
    binary = shutil.which("redis-server")
    if binary is None:  # `need` then skips or fails the tests that use Redis
        return 6379
    with socket.socket() as sock:
        sock.bind((REDIS_HOST, 0))
        port = int(sock.getsockname()[1])
    directory = tempfile.mkdtemp(prefix=f"evalq-redis-{WORKER}-")
    argv = [binary, "--port", str(port), "--bind", REDIS_HOST, "--save", "", "--appendonly", "no"]
    process = subprocess.Popen(
        [*argv, "--dir", directory, "--databases", "16"],
        stdout=subprocess.DEVNULL,
        preexec_fn=_end_with_parent,
    )

    def stop() -> None:
        process.terminate()
        process.wait(10)
        shutil.rmtree(directory, ignore_errors=True)

    atexit.register(stop)
    deadline = time.monotonic() + 10
    while not reachable(REDIS_HOST, port):
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"redis-server for xdist worker {WORKER} did not start on {port}")
        time.sleep(0.02)
    return port


if "EVALQ_TEST_REDIS_PORT" in os.environ:
    REDIS_PORT = int(os.environ["EVALQ_TEST_REDIS_PORT"])
elif WORKER:
    REDIS_PORT = _worker_redis()
    os.environ["EVALQ_TEST_REDIS_PORT"] = str(REDIS_PORT)  # for the benchmarks it starts
else:
    REDIS_PORT = 6379
REDIS_URL = f"redis://{REDIS_HOST}:{REDIS_PORT}"
"""The test Redis server, without a database number."""
