"""The Helm chart's liveness probes (`python -m evalq.workers.alive`): a worker pod's reads the
heartbeat of the worker on its host from the real Redis (alive while it beats, dead when it
stops, never dead for a broker it cannot reach); beat's reads a real beat's schedule file."""

from __future__ import annotations

import glob
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import redis
from tests.support.processes import EVALQ, PATIENCE, process_env, wait_until

from evalq.workers.alive import BEAT_STALE_S
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


def test_beat_is_alive_while_it_writes_its_schedule_and_dead_when_it_stops(
    redis_url: str, tmp_path: Path
) -> None:
    """A real `evalq beat` writes its schedule file at start; the probe passes on it, and fails
    once the file is older than beat's syncs can leave it (or there is none)."""
    schedule = str(tmp_path / "celerybeat-schedule")
    beat_probe = [sys.executable, "-m", "evalq.workers.alive", "--beat-schedule", schedule]
    assert subprocess.run(beat_probe, timeout=60 * PATIENCE).returncode == 1  # none yet
    beat = subprocess.Popen(
        [EVALQ, "beat", "--schedule", schedule],
        env=process_env({"broker_url": redis_url}),
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: glob.glob(schedule + "*"), timeout=120, what="beat's schedule file")
        assert subprocess.run(beat_probe, timeout=60 * PATIENCE).returncode == 0
    finally:
        beat.terminate()
        beat.wait(60 * PATIENCE)
    stale = time.time() - BEAT_STALE_S - 60
    for name in glob.glob(schedule + "*"):
        os.utime(name, (stale, stale))
    dead = subprocess.run(beat_probe, capture_output=True, text=True, timeout=60 * PATIENCE)
    assert dead.returncode == 1
    assert "beat is not running: schedule written" in dead.stderr
