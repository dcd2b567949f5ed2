"""What the monitoring tests share: their own Redis database and evalq subprocess environments."""

from __future__ import annotations

import os

from tests.support.processes import process_env

MONITOR_REDIS_DB = int(os.environ.get("EVALQ_TEST_MONITOR_REDIS_DB", "10"))
"""The monitoring and report tests' Redis database (other suites use database 9)."""


def evalq_env(**settings: str) -> dict[str, str]:
    """This process's environment without EVALQ_* and FLOWER_* variables, plus ``settings``."""
    return process_env(settings, drop=("EVALQ_", "FLOWER_"))
