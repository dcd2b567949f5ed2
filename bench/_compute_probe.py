"""Times the tiers' compute wherever it runs (``evalq worker --include _compute_probe``, or
imported by a benchmark that runs tiers in its own process).

Each call of a tier's compute function (`evalq.tasks.tiers.compute_text`, ``compute_judge``,
``compute_graph``, and the intake's `evalq.service.evaluated.graph_outcome`: each looked up at
call time) appends one line
``<tier> <thread CPU s> <wall s>`` to ``$BENCH_COMPUTE_DIR/<pid>.tsv``. Thread CPU time is the
calling thread's: tier 1 runs torch with one thread per computation on these machines (the cap of
`evalq.tasks.resources.text_capacity`), so that is all of its compute; the benchmark prints the
cap it ran with. Tier 1 batched across submissions (`evalq.metrics.score_batcher`) is computed
in the thread that runs the batch: per call the figures move between threads, their sums do not.
In the in-process worker the batch runs in a helper process (`evalq.workers.text_helpers`): the
helper's CPU for it (its computing thread's, as above) is added to the thread that sent it.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import Any

from evalq.service import evaluated
from evalq.tasks import resources, tiers
from evalq.tasks.resources import text_capacity as _text_capacity
from evalq.workers import text_helpers

DIRECTORY = "BENCH_COMPUTE_DIR"


_slot = threading.local()  # when this thread's tier-1 computation got its slot


@contextmanager
def _timed_slot() -> Iterator[None]:
    with _text_capacity():
        _slot.started = time.perf_counter()
        yield


def _timed(tier: str, compute: Callable[[Any], Any]) -> Callable[[Any], Any]:
    @wraps(compute)
    def timed(job: Any) -> Any:
        cpu = time.thread_time() + text_helpers.helper_cpu_s()
        wall = time.perf_counter()
        _slot.started = None
        try:
            return compute(job)
        finally:
            end = time.perf_counter()
            wall = end - (_slot.started or wall)  # tier 1: from when it got its slot
            cpu = time.thread_time() + text_helpers.helper_cpu_s() - cpu
            directory = os.environ.get(DIRECTORY)
            if directory:
                with (Path(directory) / f"{os.getpid()}.tsv").open("a") as out:
                    out.write(f"{tier}\t{cpu:.6f}\t{wall:.6f}\n")

    return timed


def install() -> None:
    """Wrap the three compute functions (once per process); tier 1's wall time is counted
    from when it holds its slot (`text_capacity`): waiting for one is not compute."""
    if getattr(tiers, "_bench_timed", False):
        return
    resources.text_capacity = _timed_slot  # what the tier-1 batcher enters for each batch
    tiers.compute_text = _timed("text", tiers.compute_text)
    tiers.compute_judge = _timed("judge", tiers.compute_judge)
    tiers.compute_graph = _timed("graph", tiers.compute_graph)
    evaluated.graph_outcome = _timed("graph", evaluated.graph_outcome)  # at intake
    tiers._bench_timed = True  # type: ignore[attr-defined]


def records(directory: Path) -> list[tuple[str, float, float]]:
    """Every ``(tier, cpu s, wall s)`` written to ``directory``."""
    found = []
    for path in directory.glob("*.tsv"):
        for line in path.read_text().splitlines():
            tier, cpu, wall = line.split("\t")
            found.append((tier, float(cpu), float(wall)))
    return found


install()
