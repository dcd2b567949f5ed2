"""A worker pod's liveness, read from its heartbeat: ``python -m evalq.workers.alive``; beat's,
from its schedule file: ``python -m evalq.workers.alive --beat-schedule PATH``.

Exit 0 when a worker on this host beats (a heartbeat key whose node name is
``<name>@<this host>``: `evalq worker` names its node ``<queue>@%h``, and a pod's host name is
the pod's name), 1 when the broker answers and no worker here beats (its heartbeat thread, and
so its main process, is gone or wedged: restart it). When the broker cannot be asked the answer
is 0: restarting every worker does not bring Redis back (the broker has its own probes). The
Helm chart's worker Deployments run it as their liveness probe (deploy/helm/evalq).

Beat has no heartbeat; its loop rewrites its schedule file (Celery beat syncs it at start and
then at most every 3 minutes, its ``sync_every``), so a file (``PATH*``: the dbm backend adds
suffixes) older than ``BEAT_STALE_S`` means the loop stopped: exit 1.
"""

from __future__ import annotations

import argparse
import glob
import os
import socket
import sys
import time

import redis

from evalq.core.settings import get_settings
from evalq.workers.heartbeat import is_redis_url, live_nodes
from evalq.workers.redis_url import redis_client

TIMEOUT_S = 3.0
"""Socket timeouts of the probe's Redis calls, inside the probe's own timeout."""
BEAT_STALE_S = 600.0
"""A beat schedule file older than this (three of beat's 3-minute syncs, and some) is stale."""


def worker_beats_here(host: str) -> bool | None:
    """True when a worker on ``host`` beats, False when none does, None when the broker cannot
    be asked (or is not Redis: then there are no heartbeats)."""
    settings = get_settings()
    if not is_redis_url(settings.broker_url):
        return None
    url = str(settings.broker_url)
    client = redis_client(url, master_name=settings.redis_master_name, timeout_s=TIMEOUT_S)
    try:
        nodes = live_nodes(client)
    except redis.RedisError:
        return None
    finally:
        client.close()
    return any(node.rpartition("@")[2] == host for node in nodes)


def beat_schedule_age_s(path: str) -> float | None:
    """Seconds since beat last wrote its schedule file ``path`` (any of its dbm files), or None
    when there is none."""
    found = glob.glob(glob.escape(path) + "*")
    if not found:
        return None
    return time.time() - max(os.path.getmtime(name) for name in found)


def main(argv: list[str] | None = None) -> int:
    """The probe's exit status (see the module's docstring)."""
    parser = argparse.ArgumentParser(prog="python -m evalq.workers.alive")
    parser.add_argument("--beat-schedule", help="probe beat through its schedule file instead")
    args = parser.parse_args(argv)
    if args.beat_schedule:
        age = beat_schedule_age_s(args.beat_schedule)
        if age is None or age > BEAT_STALE_S:
            said = "no schedule file" if age is None else f"schedule written {age:.0f} s ago"
            print(f"beat is not running: {said} ({args.beat_schedule})", file=sys.stderr)
            return 1
        return 0
    beats = worker_beats_here(socket.gethostname())
    if beats is False:
        print(f"no worker on {socket.gethostname()} beats", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
