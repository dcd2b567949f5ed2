"""Every benchmark still runs: each ``bench/*.py`` in its ``--quick`` mode exits 0 and ends
with its ratio line, so a refactor cannot silently break one (bench/README.md, "Quick mode").

The figures of a quick run are not asserted (a few iterations on a shared machine mean
nothing); a new benchmark is picked up by its file name. They use Redis databases 11-13
(flushed) of the worker's Redis server (tests/support/services.py), throwaway SQLite stores,
the real BERTScore model, and their own workers.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.services import REDIS_HOST, REDIS_PORT, REDIS_URL, need

ROOT = Path(__file__).resolve().parents[2]
BENCHES = sorted(path.name for path in (ROOT / "bench").glob("*.py") if path.name[0] != "_")
QUICK_RUN_S = 540
"""A quick run takes seconds to a minute or two on a busy 2-core machine; past this it hangs."""

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.splitlines()[-lines:])


def test_every_benchmark_file_is_found() -> None:
    assert {"merge_scale.py", "orchestration.py", "cli_startup.py"} <= set(BENCHES)


@pytest.mark.timeout(QUICK_RUN_S + 60)
@pytest.mark.parametrize("bench", BENCHES)
def test_the_benchmark_runs_in_its_quick_mode(bench: str) -> None:
    need(REDIS_HOST, REDIS_PORT, "Redis")
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALQ_")}
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / bench), "--quick"],
        cwd=ROOT,
        env=env | {"HF_HUB_OFFLINE": "1", "BENCH_REDIS_URL": REDIS_URL},
        capture_output=True,
        text=True,
        timeout=QUICK_RUN_S,
    )
    assert result.returncode == 0, f"{tail(result.stdout)}\n{tail(result.stderr)}"
    lines = result.stdout.strip().splitlines()
    assert lines, result.stderr
    assert lines[-1].startswith("ratio "), f"no ratio line last:\n{tail(result.stdout)}"
