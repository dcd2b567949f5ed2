"""A Redis server of the test's own, on a free port, that a test can stop and start again.

The shared Redis on :6379 must stay up for everyone else; a test that needs the broker to go
down mid-way runs its own `redis-server` (no persistence) instead.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest
import redis

from evalq.workers.names import QUEUES
from tests.support.processes import free_port


class RedisServer:
    """One `redis-server` process bound to 127.0.0.1:``port``, in ``directory``."""

    def __init__(self, directory: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is not installed (.ci/run installs it)")
        self.binary = binary
        self.directory = directory
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """Database 0 of this server."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start the server and wait until it answers PING."""
        argv = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        argv += ["--appendonly", "no", "--dir", str(self.directory)]
        self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
        client = redis.Redis.from_url(self.url)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
            finally:
                client.close()

    def stop(self) -> None:
        """Stop the server (SIGTERM) and wait for it to exit."""
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None

    def length(self, queue: str) -> int:
        """How many messages wait in ``queue`` (a kombu Redis list)."""
        client = redis.Redis.from_url(self.url)
        try:
            return int(client.llen(queue))
        finally:
            client.close()

    def waiting(self) -> int:
        """How many messages wait in all of evalq's queues together."""
        return sum(self.length(queue) for queue in QUEUES)
