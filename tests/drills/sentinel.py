"""A Redis Sentinel group of the drill's own: one master, one replica, three sentinels.

Every process is a real ``redis-server`` / ``redis-sentinel`` on a free loopback port, with its
files in the drill's temporary directory; the shared Redis (6379) is never touched.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis

from tests.drills.harness import free_port, wait_for
from tests.support.processes import PATIENCE
from tests.support.services import REDIS_HOST

MASTER_NAME = "evalq-drill"
QUORUM = 2
DOWN_AFTER_MS = 3000  # a master a busy machine starves for a second is not down
FAILOVER_TIMEOUT_MS = 5000


@dataclass
class SentinelGroup:
    """The processes of the group, by role; `master_port` is the master at the start."""

    directory: Path
    master_port: int = field(default_factory=free_port)
    replica_port: int = field(default_factory=free_port)
    sentinel_ports: list[int] = field(default_factory=lambda: [free_port() for _ in range(3)])
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def url(self) -> str:
        """kombu's Sentinel syntax: every sentinel, ``;``-separated, database 0."""
        return ";".join(f"sentinel://{REDIS_HOST}:{port}/0" for port in self.sentinel_ports)

    def start(self) -> None:
        """Start the master, the replica (synced) and the sentinels (agreeing on a quorum)."""
        for tool in ("redis-server", "redis-sentinel"):
            if shutil.which(tool) is None:
                pytest.skip(f"{tool} is not installed (apt-get install redis-sentinel)")
        self.directory.mkdir(parents=True, exist_ok=True)
        self._spawn("master", ["redis-server", *self._server_args(self.master_port)])
        replica = [*self._server_args(self.replica_port), "--replicaof", REDIS_HOST]
        self._spawn("replica", ["redis-server", *replica, str(self.master_port)])
        wait_for(self._replica_synced, timeout=60 * PATIENCE, what="replica in sync", poll=0.2)
        for i, port in enumerate(self.sentinel_ports):
            config = self.directory / f"sentinel-{i}.conf"
            config.write_text(self._sentinel_config(port))
            self._spawn(f"sentinel-{i}", ["redis-sentinel", str(config)])
        wait_for(self._quorum_reached, timeout=60 * PATIENCE, what="sentinel quorum", poll=0.5)

    def kill_master(self) -> None:
        """``kill -9`` the process that is master now (no save, no goodbye to the replica)."""
        process = self.processes["master"]
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)

    def current_master(self) -> tuple[str, int] | None:
        """The master the sentinels name now, None when none answers."""
        for port in self.sentinel_ports:
            try:
                with redis.Redis(host=REDIS_HOST, port=port, socket_timeout=1) as sentinel:
                    host, master_port = sentinel.execute_command(
                        "SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME
                    )
                    return host.decode(), int(master_port)
            except (redis.RedisError, TypeError, ValueError):
                continue
        return None

    def replica_has(self, key: str) -> bool:
        """True once ``key`` exists on the replica (what the master wrote has reached it)."""
        with redis.Redis(host=REDIS_HOST, port=self.replica_port, socket_timeout=1) as replica:
            return bool(replica.exists(key))

    def stop(self) -> None:
        """Stop every process still running (SIGTERM, then SIGKILL)."""
        for process in self.processes.values():
            if process.poll() is None:
                process.terminate()
        for process in self.processes.values():
            try:
                process.wait(timeout=20 * PATIENCE)
            except subprocess.TimeoutExpired:
                with suppress(ProcessLookupError):
                    process.kill()
                process.wait(timeout=20)

    def _server_args(self, port: int) -> list[str]:
        args = ["--port", str(port), "--bind", REDIS_HOST, "--dir", str(self.directory)]
        args += ["--dbfilename", f"dump-{port}.rdb", "--save", "", "--appendonly", "no"]
        return [*args, "--daemonize", "no"]

    def _sentinel_config(self, port: int) -> str:
        # A sentinel rewrites its own file (what it learns of replicas and peers): one each.
        return "\n".join(
            [
                f"port {port}",
                f"bind {REDIS_HOST}",
                f"dir {self.directory}",
                "daemonize no",
                f"sentinel monitor {MASTER_NAME} {REDIS_HOST} {self.master_port} {QUORUM}",
                f"sentinel down-after-milliseconds {MASTER_NAME} {DOWN_AFTER_MS}",
                f"sentinel failover-timeout {MASTER_NAME} {FAILOVER_TIMEOUT_MS}",
                f"sentinel parallel-syncs {MASTER_NAME} 1",
                "",
            ]
        )

    def _spawn(self, role: str, argv: list[str]) -> None:
        with (self.directory / f"{role}.log").open("ab") as out:
            self.processes[role] = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )

    def _replica_synced(self) -> bool:
        assert self.processes["replica"].poll() is None, "the replica exited"
        try:
            with redis.Redis(host=REDIS_HOST, port=self.replica_port, socket_timeout=1) as r:
                return r.info("replication").get("master_link_status") == "up"
        except redis.RedisError:
            return False

    def _quorum_reached(self) -> bool:
        """Every sentinel sees the replica and its two peers."""
        for port in self.sentinel_ports:
            try:
                with redis.Redis(host=REDIS_HOST, port=port, socket_timeout=1) as sentinel:
                    master = sentinel.sentinel_master(MASTER_NAME)
            except redis.RedisError:
                return False
            if master.get("num-slaves", 0) < 1 or master.get("num-other-sentinels", 0) < 2:
                return False
        return True


@contextmanager
def sentinel_group(directory: Path) -> Iterator[SentinelGroup]:
    """A started `SentinelGroup`, every process stopped when the block ends."""
    group = SentinelGroup(directory)
    try:
        group.start()
        yield group
    finally:
        group.stop()
