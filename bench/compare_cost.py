"""The largest allowed GET /v1/compare against a leaderboard, on a real `evalq api`.

    python bench/compare_cost.py [--submissions 25000] [--tasks 50] [--quick]

Builds a throwaway SQLite store of ``--submissions`` evaluated submissions (rows written directly
in bulk, `tests/support/compare_store.py`: each scored by the merge's own function, every tier
skipped) over ``--tasks`` Arena tasks, every task run by each of ``EVALQ_COMPARE_MAX_GROUPS``
models (20 by default). Starts `evalq api` on it (shipped compare limits; Redis db 12 as the
broker, which these reads never use) and times, side by side:

- ``GET /v1/tasks/t000/leaderboard`` (one task's rows), median of 5;
- the largest request the limits allow: ``GET /v1/compare?tasks=*&by=model`` naming every model
  (every row of the store, every task paired), median of 2;
- ``GET /v1/submissions/ID`` alone (median of 20), and while the compare runs (median and
  worst of the requests issued meanwhile).

The last lines are the ratios: compare / one leaderboard, compare / the leaderboards of every
task it reads (the same rows), and a submission read during a compare / alone.
``--quick`` (1,000 submissions over 10 tasks, fewer repeats) runs in seconds for CI.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx
from _common import figure, parse_args, redis_url
from tests.support.compare_store import add_evaluated, bulk_submission, put_tasks
from tests.support.databases import fresh_database
from tests.support.processes import free_port, process_env, start, stop, wait_for_http

from evalq.core.schemas import Task
from evalq.core.settings import Settings

DB = 12


def build(db_url: str, submissions: int, tasks: int, models: int) -> dict[str, Task]:
    """The store: submission n is model n % models on task (n // models) % tasks."""
    from evalq.store.db import session_scope

    defined = {f"t{i:03d}": Task(id=f"t{i:03d}", kind="arena") for i in range(tasks)}
    runs = [
        bulk_submission(
            f"s{n:06d}", f"t{(n // models) % tasks:03d}", model=f"m{n % models:02d}", seed=n
        )
        for n in range(submissions)
    ]
    with session_scope(db_url) as session:
        put_tasks(session, list(defined.values()))
    with session_scope(db_url) as session:
        add_evaluated(session, defined, runs)
    return defined


def timed(client: httpx.Client, path: str, params: object = None) -> float:
    """Seconds one GET took (it must succeed)."""
    started = time.perf_counter()
    client.get(path, params=params).raise_for_status()  # type: ignore[arg-type]
    return time.perf_counter() - started


def meanwhile(url: str, headers: dict[str, str], done: threading.Event, times: list[float]) -> None:
    """GET one submission again and again until ``done``; each answer time into ``times``."""
    with httpx.Client(base_url=url, headers=headers, timeout=600) as client:
        while not done.is_set():
            times.append(timed(client, "/v1/submissions/s000000"))
            time.sleep(0.02)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--submissions", type=int, default=25_000)
    parser.add_argument("--tasks", type=int, default=50)
    options = parse_args(parser, quick={"submissions": 1000, "tasks": 10})
    limits = Settings()
    models = limits.compare_max_groups
    repeats = 2 if options.quick else 5
    from evalq.store.db import session_scope
    from evalq.store.keys import create_key

    with (
        tempfile.TemporaryDirectory() as directory,
        fresh_database("sqlite", Path(directory)) as db,
    ):
        started = time.perf_counter()
        build(db, options.submissions, options.tasks, models)
        figure("store built (SQLite, bulk rows)", time.perf_counter() - started, "s")
        with session_scope(db) as session:
            key = create_key(session, name="bench", scopes=["read"])
        settings = {
            "database_url": db,
            "broker_url": redis_url(DB),
            "result_backend": redis_url(DB),
        }
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        args = ["api", "--port", str(port), "--log-level", "warning"]
        process = start(args, process_env(settings), Path(directory) / "api.log")
        headers = {"Authorization": f"Bearer {key}"}
        params = {"tasks": "*", "by": "model", "values": [f"m{i:02d}" for i in range(models)]}
        try:
            wait_for_http(f"{url}/healthz", process, timeout=90, what="evalq api")
            with httpx.Client(base_url=url, headers=headers, timeout=600) as client:
                timed(client, "/v1/tasks/t000/leaderboard")  # warm: imports, profile
                board = statistics.median(
                    timed(client, "/v1/tasks/t000/leaderboard") for _ in range(repeats)
                )
                alone = statistics.median(
                    timed(client, "/v1/submissions/s000000") for _ in range(4 * repeats)
                )
                during: list[float] = []
                done = threading.Event()
                poller = threading.Thread(target=meanwhile, args=(url, headers, done, during))
                poller.start()
                try:
                    costs = [timed(client, "/v1/compare", params) for _ in range(2)]
                finally:
                    done.set()
                    poller.join()
        finally:
            stop(process)
    compare = statistics.median(costs)
    rows = options.submissions // options.tasks
    figure("submissions / tasks / groups compared", options.submissions)
    figure("  tasks", options.tasks)
    figure("  groups (EVALQ_COMPARE_MAX_GROUPS)", models)
    figure(f"GET /v1/tasks/t000/leaderboard ({rows} rows)", board, "s")
    figure(f"GET /v1/compare tasks=* by=model ({options.submissions} rows)", compare, "s")
    figure("GET /v1/submissions/ID alone (median)", alone, "s")
    figure("GET /v1/submissions/ID during the compare (median)", statistics.median(during), "s")
    figure("GET /v1/submissions/ID during the compare (worst)", max(during), "s")
    figure("ratio compare / one leaderboard", compare / board)
    figure("ratio compare / leaderboards of every task read", compare / (board * options.tasks))
    figure("ratio submission read during compare / alone", statistics.median(during) / alone)


if __name__ == "__main__":
    main()
