"""Real ``evalq`` subprocesses for integration tests: free ports, start, wait, stop.

Each process runs in its own process group (``start_new_session``), so `stop` reaches its
children too (a prefork worker's pool, for instance).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest

EVALQ = str(Path(sys.executable).with_name("evalq"))
"""The ``evalq`` entry point of the running interpreter's environment."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def process_env(
    settings: Mapping[str, str], *, drop: tuple[str, ...] = ("EVALQ_",)
) -> dict[str, str]:
    """This process's environment without variables starting with ``drop``, plus ``settings``.

    Args:
        settings: Settings names without the prefix (``database_url``); set as ``EVALQ_*``.
        drop: Prefixes of inherited variables to leave out.

    Returns:
        The environment for a subprocess.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    return env | {f"EVALQ_{key.upper()}": value for key, value in settings.items()}


def start(
    args: list[str], env: dict[str, str], log: Path, *, cwd: Path | None = None
) -> subprocess.Popen[bytes]:
    """Start ``evalq ARGS`` in its own process group, stdout and stderr to ``log``.

    Args:
        args: The ``evalq`` command line after the program name.
        env: The whole environment of the process.
        log: File the output goes to (overwritten).
        cwd: Working directory (default: this process's).

    Returns:
        The running process.
    """
    with log.open("wb") as out:
        return subprocess.Popen(
            [EVALQ, *args],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            start_new_session=True,
        )


def stop(process: subprocess.Popen[bytes], timeout: float = 20) -> None:
    """SIGTERM the process group, then SIGKILL it if it is still there after ``timeout`` s."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


PATIENCE = float(os.environ.get("EVALQ_TEST_PATIENCE", "3"))
"""How many times its stated timeout a wait for the system under test goes on before it fails.

A stated timeout is what the wait takes at worst on a quiet machine; CI runs on a machine that
other work may share (issue 43: load 5-30 beside the suite), where everything is several times
slower. A wait that succeeds returns as soon as its condition holds, so patience costs a passing
test nothing; it only delays the report of a real hang."""
HTTP_TIMEOUT = 60 * PATIENCE
"""Seconds an HTTP request of a test or a benchmark may wait for its answer: httpx's default
(5 s) is a wall-clock assumption that a busy machine breaks (a stressed CI run failed on a task
PUT that took longer); every `httpx` call and client under tests/ and bench/ names its timeout
(tests/unit/test_suite_rules.py)."""


def wait_until(
    predicate: Callable[[], object], *, timeout: float, what: str, interval: float = 0.25
) -> None:
    """Poll ``predicate()`` until it is truthy; fail naming ``what`` after ``timeout`` s times
    `PATIENCE`."""
    patience = timeout * PATIENCE
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    pytest.fail(f"timed out after {patience:.0f} s waiting for {what}")


def wait_for_http(
    url: str,
    process: subprocess.Popen[bytes],
    *,
    timeout: float,
    what: str,
    ok: tuple[int, ...] = (200,),
    **request: Any,
) -> None:
    """Poll ``GET url`` until it answers with a status in ``ok``.

    Args:
        url: The whole URL to get.
        process: The server; the wait fails at once if it exits.
        timeout: Seconds to wait in all.
        what: The server's name, for the failure message.
        ok: Statuses that count as up.
        **request: More arguments for `httpx.get` (``auth=...``).
    """

    def answered() -> bool:
        if process.poll() is not None:
            pytest.fail(f"{what} exited with {process.returncode} before answering {url}")
        try:
            return httpx.get(url, timeout=2, **request).status_code in ok
        except httpx.TransportError:
            return False

    wait_until(answered, timeout=timeout, what=f"{what} to answer on {url}", interval=0.2)
