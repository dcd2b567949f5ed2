"""Redis URLs as evalq reads them: one server (``redis://``), or a Sentinel group.

A Sentinel URL is kombu's own syntax, the sentinels separated by ``;``::

    sentinel://:password@10.0.0.1:26379/0;sentinel://10.0.0.2:26379;sentinel://10.0.0.3:26379

with the master's name in ``EVALQ_REDIS_MASTER_NAME``. The database number and the password
are taken from the first sentinel's part, as Celery's result backend takes them. Celery's
broker and result backend are handed the same URL with ``master_name`` in their transport
options (`sentinel_options`); evalq's own clients (heartbeats, the recovery sweep, queue
depths, the judge's rate limiter and cache) come from `redis_client`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

import redis
from redis.sentinel import Sentinel

SENTINEL_SCHEME = "sentinel://"
REDIS_SCHEMES = ("redis://", "rediss://", "unix://", SENTINEL_SCHEME)


def is_sentinel_url(url: str | None) -> bool:
    """True for a ``sentinel://`` URL."""
    return bool(url) and str(url).startswith(SENTINEL_SCHEME)


def is_redis_url(url: str | None) -> bool:
    """True for any Redis URL evalq can make a client for, Sentinel included."""
    return bool(url) and str(url).startswith(REDIS_SCHEMES)


@dataclass(frozen=True)
class SentinelGroup:
    """The sentinels of one URL, and the database and password of the master they watch."""

    sentinels: list[tuple[str, int]]
    db: int
    password: str | None
    username: str | None


def parse_sentinel_url(url: str) -> SentinelGroup:
    """The sentinels of a ``sentinel://h:p;sentinel://h:p`` URL; ValueError on a bad part."""
    sentinels: list[tuple[str, int]] = []
    first = None
    for chunk in url.split(";"):
        if not chunk.startswith(SENTINEL_SCHEME):
            raise ValueError(
                f"broker URL: every ';'-separated part must start with {SENTINEL_SCHEME}, "
                f"got {chunk!r}"
            )
        parts = urlsplit(chunk)
        if not parts.hostname:
            raise ValueError(f"broker URL: sentinel part {chunk!r} names no host")
        sentinels.append((parts.hostname, parts.port or 26379))
        first = first or parts
    assert first is not None  # split always yields one part
    path = first.path.strip("/")
    if path and not path.isdigit():
        raise ValueError(f"broker URL: the database must be a number, got {path!r}")
    return SentinelGroup(
        sentinels=sentinels,
        db=int(path or 0),
        password=unquote(first.password) if first.password else None,
        username=unquote(first.username) if first.username else None,
    )


def require_master_name(url: str | None, master_name: str | None) -> str | None:
    """``master_name`` for a Sentinel URL (ValueError when unset); None for any other URL."""
    if not is_sentinel_url(url):
        return None
    if not master_name:
        raise ValueError(
            "EVALQ_REDIS_MASTER_NAME must be set to the master's name when a URL is sentinel://"
        )
    return master_name


def sentinel_options(url: str | None, master_name: str | None) -> dict[str, Any]:
    """Celery transport options that point a ``sentinel://`` URL at its master; {} otherwise."""
    name = require_master_name(url, master_name)
    return {} if name is None else {"master_name": name}


def redis_client(
    url: str, *, master_name: str | None = None, timeout_s: float | None = None
) -> redis.Redis:
    """A client for ``url``; on a Sentinel URL, one that follows the master through failovers.

    ``timeout_s`` bounds connecting and every reply (the sentinels' too); None waits as long as
    the socket does.
    """
    timeouts = {"socket_connect_timeout": timeout_s, "socket_timeout": timeout_s}
    if not is_sentinel_url(url):
        if timeout_s is None:
            return redis.Redis.from_url(url)
        return redis.Redis.from_url(url, **timeouts)
    name = require_master_name(url, master_name)
    assert name is not None
    group = parse_sentinel_url(url)
    sentinel = Sentinel(group.sentinels, sentinel_kwargs=dict(timeouts), **timeouts)
    client: redis.Redis = sentinel.master_for(
        name, db=group.db, password=group.password, username=group.username
    )
    return client
