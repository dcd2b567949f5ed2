"""Worker heartbeats: which worker runs a tier, and whether that worker still lives.

Each `evalq worker` process takes an identity when Celery initialises it, its *owner* string
``"<node name>/<token>"``: the token is new on every start, so a worker restarted under the same
node name (a container restart, pid 1 again) is not taken for the one that died. Prefork children
are forked from the main process and inherit the identity; the tier runner records it in the
tier row it claims (`evalq.store.queries.start_tier`).

The main process keeps the Redis key ``evalq:worker:<owner>`` (value: the node name) alive with a
TTL of ``HEARTBEAT_TTLS`` heartbeat periods, from a thread of its own, so a worker busy in every
child still beats. A worker killed with ``-9`` (or a lost machine) stops beating and its key
expires: the recovery sweep then knows its running tiers are lost, not waiting. Missing a single
beat never makes a worker dead; only an absence of several periods does.
"""

from __future__ import annotations

import logging
import math
import secrets
import threading
from collections.abc import Iterable
from typing import Any

import redis
from celery import signals

from evalq.core.settings import Settings
from evalq.workers import redis_url

logger = logging.getLogger(__name__)

KEY_PREFIX = "evalq:worker:"
HEARTBEAT_TTLS = 3
"""A heartbeat key lives this many heartbeat periods: two missed beats never look like death."""

_owner: list[str] = []  # this worker's identity, inherited by its forked children
_stop = threading.Event()


def heartbeat_key(owner: str) -> str:
    """The Redis key that says ``owner`` is alive."""
    return f"{KEY_PREFIX}{owner}"


def new_owner(node: str) -> str:
    """A fresh identity for a worker started under node name ``node``."""
    return f"{node}/{secrets.token_hex(6)}"


def current_owner() -> str | None:
    """This worker's identity; None outside an `evalq worker` (embedded worker, tests, CLI)."""
    return _owner[0] if _owner else None


def heartbeat_ttl_s(settings: Settings) -> int:
    """Seconds a heartbeat key lives."""
    return max(1, math.ceil(HEARTBEAT_TTLS * settings.worker_heartbeat_s))


def is_redis_url(url: str | None) -> bool:
    """True for a Redis broker, the only one heartbeats (and kombu's unacked hash) live on."""
    return redis_url.is_redis_url(url)


def beat(client: redis.Redis, owner: str, node: str, *, ttl_s: int) -> None:
    """Say once that ``owner`` (running as ``node``) is alive for the next ``ttl_s`` seconds."""
    client.set(heartbeat_key(owner), node, ex=ttl_s)


def alive_owners(client: redis.Redis, owners: Iterable[str]) -> set[str]:
    """Those of ``owners`` whose heartbeat key exists."""
    wanted = sorted(set(owners))
    if not wanted:
        return set()
    with client.pipeline(transaction=False) as pipe:
        for owner in wanted:
            pipe.exists(heartbeat_key(owner))
        found = pipe.execute()
    return {owner for owner, exists in zip(wanted, found, strict=True) if exists}


def live_nodes(client: redis.Redis) -> set[str]:
    """Node names of every worker with a heartbeat (the ones a control command must reach)."""
    nodes: set[str] = set()
    for key in client.scan_iter(match=f"{KEY_PREFIX}*", count=500):
        node = client.get(key)
        if node is not None:
            nodes.add(node.decode() if isinstance(node, bytes) else str(node))
    return nodes


def install(settings: Settings) -> None:
    """Give the worker about to start an identity and a heartbeat (`evalq worker` only).

    Without a Redis broker there is nowhere to beat: tier rows then carry no owner, and the
    sweep falls back to its age rule (EVALQ_STUCK_AFTER_S).
    """
    if not is_redis_url(settings.broker_url):
        return
    url = str(settings.broker_url)
    master_name = settings.redis_master_name
    ttl = heartbeat_ttl_s(settings)

    def take_identity(sender: str, **_: Any) -> None:
        _owner[:] = [new_owner(sender)]
        # First beat before any task is consumed, so no tier is claimed by an unknown owner.
        _beat_quietly(redis_url.redis_client(url, master_name=master_name), ttl)

    def start_beating(**_: Any) -> None:
        thread = threading.Thread(
            target=_beat_until_stopped,
            args=(url, master_name, settings.worker_heartbeat_s, ttl),
            name="evalq-heartbeat",
            daemon=True,
        )
        thread.start()

    def stop_beating(**_: Any) -> None:
        _stop.set()
        owner = current_owner()
        if owner is not None:  # a clean shutdown leaves nothing running: say so at once
            _delete_quietly(redis_url.redis_client(url, master_name=master_name), owner)

    signals.celeryd_init.connect(take_identity, weak=False)
    signals.worker_ready.connect(start_beating, weak=False)
    signals.worker_shutdown.connect(stop_beating, weak=False)


def _beat_until_stopped(url: str, master_name: str | None, period_s: float, ttl_s: int) -> None:
    client = redis_url.redis_client(url, master_name=master_name)
    while True:
        _beat_quietly(client, ttl_s)
        if _stop.wait(period_s):
            return


def _beat_quietly(client: redis.Redis, ttl_s: int) -> None:
    owner = current_owner()
    if owner is None:
        return
    try:
        beat(client, owner, owner.rsplit("/", 1)[0], ttl_s=ttl_s)
    except redis.RedisError as exc:  # the broker is down: the worker cannot work either
        logger.warning("heartbeat of %s not written: %s", owner, exc)


def _delete_quietly(client: redis.Redis, owner: str) -> None:
    try:
        client.delete(heartbeat_key(owner))
    except redis.RedisError as exc:
        logger.warning("heartbeat of %s not removed: %s", owner, exc)
