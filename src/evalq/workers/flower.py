"""Flower, the Celery monitor, on evalq's broker and always behind HTTP basic auth.

Flower reads ``FLOWER_*`` environment variables before its command line, so the credentials go
through ``FLOWER_BASIC_AUTH`` in this process's environment and never appear in ``ps`` output.
Its Prometheus endpoint ``/metrics`` is served without authentication (Flower's own choice, so a
scraper needs no password); the dashboard and ``/api/*`` answer 401 without the credentials.
"""

from __future__ import annotations

import os

from evalq.core.errors import InvalidInput
from evalq.core.settings import Settings, get_settings
from evalq.workers.app import make_app


def basic_auth(settings: Settings) -> str:
    """The ``user:password`` pair Flower checks, from ``EVALQ_FLOWER_USER`` / ``_PASSWORD``.

    Raises:
        InvalidInput: no password is set, or a value Flower cannot carry (Flower splits its
            credential list on commas and the pair on the first colon).
    """
    problems: list[tuple[str, str]] = []
    if not settings.broker_url:
        problems.append(("EVALQ_BROKER_URL", "required: Flower watches a real broker"))
    if settings.flower_password is None or not settings.flower_password.get_secret_value():
        problems.append(("EVALQ_FLOWER_PASSWORD", "required: Flower never runs without auth"))
        raise InvalidInput(problems)
    password = settings.flower_password.get_secret_value()
    if ":" in settings.flower_user or "," in settings.flower_user:
        problems.append(("EVALQ_FLOWER_USER", "must not contain ':' or ','"))
    if "," in password:
        problems.append(("EVALQ_FLOWER_PASSWORD", "must not contain ','"))
    if problems:
        raise InvalidInput(problems)
    return f"{settings.flower_user}:{password}"


def flower_argv(*, address: str, port: int, purge_offline_after_s: int | None = None) -> list[str]:
    """Arguments of ``celery flower`` (credentials excluded: they travel in the environment)."""
    argv = ["flower", f"--address={address}", f"--port={port}"]
    if purge_offline_after_s is not None:
        argv.append(f"--purge_offline_workers={purge_offline_after_s}")
    return argv


def run_flower(
    *,
    address: str = "127.0.0.1",
    port: int = 5555,
    purge_offline_after_s: int | None = None,
    settings: Settings | None = None,
) -> None:
    """Run Flower against ``EVALQ_BROKER_URL`` until interrupted (blocking).

    Args:
        address: interface to listen on; loopback by default (use 0.0.0.0 in a container).
        port: HTTP port.
        purge_offline_after_s: forget workers that have been offline this long.
        settings: defaults to the process Settings.

    Raises:
        InvalidInput: no broker or no password configured (see `basic_auth`).
    """
    settings = settings or get_settings()
    credentials = basic_auth(settings)
    os.environ["FLOWER_BASIC_AUTH"] = credentials
    app = make_app(settings)
    app.start(flower_argv(address=address, port=port, purge_offline_after_s=purge_offline_after_s))
