"""External programs some integration tests drive (Chromium, docker-compose)."""

from __future__ import annotations

import os
import shutil

import pytest


def required_program(name: str, install: str) -> str:
    """The path of program ``name``; fails in CI (.ci/run installs it), skips locally if missing.

    Args:
        name: The executable looked up on PATH.
        install: How to install it, for the skip message (``apt-get install chromium``).

    Returns:
        The program's path.
    """
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name} is not installed (CI=true: .ci/run must install it)")
        pytest.skip(f"{name} is not installed ({install})")
    return path
