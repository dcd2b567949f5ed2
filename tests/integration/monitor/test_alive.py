"""A worker pod's liveness probe (`python -m evalq.workers.alive`, the Helm chart's) reads the
heartbeat of the worker on its host from the real Redis: alive while it beats, dead when it
stops, and never dead for a broker it cannot reach."""

from __future__ import annotations

import socket
import subprocess
import sys

import redis
from tests.support.processes import PATIENCE, process_env

from evalq.workers.heartbeat import beat, heartbeat_key, new_owner


def probe(broker_url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evalq.workers.alive"],
        env=process_env({"broker_url": broker_url}),
        capture_output=True,
        text=True,
        timeout=60 * PATIENCE,
    )


def test_alive_while_this_host_s_worker_beats_and_dead_when_it_stops(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    here = new_owner(f"text@{socket.gethostname()}")
    elsewhere = new_owner("text@another-pod")
    beat(client, elsewhere, "text@another-pod", ttl_s=60)
    beat(client, here, f"text@{socket.gethostname()}", ttl_s=60)
    assert probe(redis_url).returncode == 0
    client.delete(heartbeat_key(here))  # its heartbeat expired: only another pod's beats
    dead = probe(redis_url)
    assert dead.returncode == 1
    assert f"no worker on {socket.gethostname()} beats" in dead.stderr
    client.close()


def test_a_broker_it_cannot_reach_is_not_a_dead_worker() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]  # nothing listens once the socket closes
    assert probe(f"redis://127.0.0.1:{closed}/0").returncode == 0
