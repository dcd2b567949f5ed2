"""A prefork worker's parent imports what its children need before the pool forks (once, not
per child), and never torch (its thread pools do not survive a fork)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from tests.support.processes import PATIENCE

from evalq.workers.names import GRAPH_QUEUE, MERGE_QUEUE, TEXT_QUEUE


def loaded_after_preload(queues: list[str]) -> set[str]:
    code = (
        "import sys\n"
        "from evalq.workers import bootstrap\n"
        "before = set(sys.modules)\n"
        f"bootstrap.preload({queues!r})\n"
        "print(' '.join(sorted(set(sys.modules) - before)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=120 * PATIENCE,
    )
    return set(result.stdout.split())


def test_a_merge_worker_imports_the_refreshs_statistics_before_forking() -> None:
    loaded = loaded_after_preload([MERGE_QUEUE])
    assert {"scipy.stats", "numpy", "evalq.stats.comparison"} <= loaded
    assert "torch" not in loaded


def test_a_graph_worker_imports_the_graph_metrics() -> None:
    assert "evalq.metrics.graph" in loaded_after_preload([GRAPH_QUEUE])


@pytest.mark.parametrize("queues", [[TEXT_QUEUE], [TEXT_QUEUE, GRAPH_QUEUE]])
def test_a_text_worker_never_imports_torch_before_forking(queues: list[str]) -> None:
    assert not {name for name in loaded_after_preload(queues) if name.startswith("torch")}
