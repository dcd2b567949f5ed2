"""The evalq settings integration tests run with, and how a test sets them."""

from __future__ import annotations

import os

import pytest

from evalq.core.settings import get_settings

REDIS_TEST_DB = int(os.environ.get("EVALQ_TEST_REDIS_DB", "9"))
"""Redis database the integration tests flush and use (override to run two suites at once)."""


def configure(monkeypatch: pytest.MonkeyPatch, **env: str) -> None:
    """Set EVALQ_* variables and drop every cache built from the old ones."""
    for key, value in env.items():
        monkeypatch.setenv(f"EVALQ_{key.upper()}", value)
    get_settings.cache_clear()


def pipeline_settings(db_url: str, redis_url: str, **extra: str) -> dict[str, str]:
    """Settings (names without the ``EVALQ_`` prefix) for a store and a Redis broker.

    Retries are immediate and few, and the baseline refresh and unacked-restore intervals short,
    so a test's pipeline settles quickly.

    Args:
        db_url: The store.
        redis_url: Broker and result backend.
        **extra: More settings, or ones replacing these.

    Returns:
        The settings, for `configure` or `process_env`.
    """
    env = {
        "database_url": db_url,
        "broker_url": redis_url,
        "result_backend": redis_url,
        "tier_retry_backoff_s": "0",
        "tier_max_retries": "1",
        "baseline_refresh_debounce_s": "0.2",
        "unacked_restore_interval_s": "1",
    }
    return env | extra
