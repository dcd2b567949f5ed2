"""What a reader waits for: every page and read of a real `evalq api`, tasks of 1k-100k runs.

    python bench/read_scale.py [--sizes 1000 10000 100000] [--backends sqlite postgresql]
                               [--repeat 5] [--kinds arena peerread scylla suite] [--quick]
                               [--reads board tasks ...] [--clone every|read]

The bundled examples are merged for real once (`evalq demo`, `_clone_store.py`); for each
backend one store then grows size by size: at each size every example task (three Arena,
PeerRead, Scylla, a suite) gets a new task of that many runs cloned from its merged runs (new
ids, scaled usage, jittered scores, the tier rows and traces copied), so at 100k the store holds
~6 x 111k runs. One `evalq api` per backend (signed in as the UI is, and with a ``read`` key)
is timed over HTTP after each size, ``--repeat`` requests per read, p50 / p95:

- "first": the first visit after a run of the task changed (a new clone stored with its tier
  rows and merged for real by `merge_tiers`, in this process, before each request);
- "merge of one run": each of those merges' wall (`merge_tiers`, the projector's share included);
- "again": the same request after the refresh a worker runs once merges stop (the debounced
  baseline refresh, here in this process: every run's standing, its place on the unfiltered
  board and the board's figures stored), nothing changed since (a quiet board).

Reads, on the new task of each size: the UI board ``/ui/tasks/ID`` (page 1 and the last page)
and ``GET /v1/tasks/ID/leaderboard?limit=50`` (offset 0 and the last 50), per kind; then on
the Arena task: the tasks page ``/``, ``/ui/review``, ``/metrics``, UI compare and
``GET /v1/compare`` (two models), a run page ``/ui/runs/ID``; ``evalq report TASK`` (HTML, the
CLI as a process: its time, size and peak RSS); ``GET /v1/submissions/ID`` alone and while UI
board first visits run one after another, and that ratio; the API process's RSS after each
size. A request that fails or takes more than ``--timeout`` seconds is shown as such.

One table per backend, sizes side by side, each p95 also as a ratio to 300 ms (issue 33's
goal); no figure is asserted. Last line: the worst p95 / 300 ms at the largest size.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import signal
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from _clone_store import (
    Example,
    add_clones,
    clone_run_id,
    merged_examples,
    read_examples,
    store_clones,
)
from _common import apply_env, evalq_env, parse_args, ratio, redis_url, rss_kib
from tests.support.processes import EVALQ, free_port, start, stop, wait_for_http
from tests.support.ui import sign_in

GOAL_S = 0.3
"""Issue 33's goal: 300 ms p95 for every page and read."""
PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
PORTS = range(8391, 8400)
KINDS = ("arena", "peerread", "scylla", "suite")
COMPARED = ("claude-sonnet-4", "gpt-4o")
DB = 12


@dataclass
class Timing:
    """Seconds of each answered request, and what went wrong with the others."""

    seconds: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    note: str = ""

    def p(self, q: float) -> float:
        """The ``q`` quantile of the answered requests (nearest rank)."""
        ordered = sorted(self.seconds)
        return ordered[max(0, math.ceil(q * len(ordered)) - 1)]

    def cell(self) -> str:
        if not self.seconds:
            return self.failures[0] if self.failures else "-"
        p50, p95 = self.p(0.5), self.p(0.95)
        text = f"{shown(p50)} / {shown(p95)} ({p95 / GOAL_S:.1f}x)"
        if self.failures:
            text += f" {len(self.failures)} {self.failures[0]}"
        return text + (f" {self.note}" if self.note else "")


def shown(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    return f"{seconds:.2f} s" if seconds < 10 else f"{seconds:.1f} s"


@dataclass
class Store:
    """One backend's store as it grows: its URL, the examples and the runs merged so far."""

    url: str
    examples: list[Example]
    merged: dict[str, int] = field(default_factory=dict)
    rng: random.Random = field(default_factory=lambda: random.Random(33))
    merges: Timing = field(default_factory=lambda: Timing())
    """Seconds of each merge of one run (`merge_tiers`: scoring, the evaluation stored and
    the projector's share: standing, tallies), at the current size."""

    def change(self, example: Example, task_id: str) -> None:
        """A new run of ``task_id``: a clone stored running with its tier rows, then merged."""
        from evalq.tasks.merge import merge_tiers

        index = 10_000_000 + self.merged.get(task_id, 0)
        self.merged[task_id] = self.merged.get(task_id, 0) + 1
        [sid] = store_clones(
            self.url, example, task_id, range(index, index + 1), self.rng, status="running"
        )
        started = time.perf_counter()
        merge_tiers(None, sid)
        self.merges.seconds.append(time.perf_counter() - started)

    def refresh(self, task_id: str) -> None:
        """The debounced refresh a worker runs once the merges stop: the baseline, every run's
        standing and place, the board's figures (`evalq.read.served.refresh_task`)."""
        from evalq.tasks.merge import refresh_baseline

        refresh_baseline(task_id)


@contextmanager
def new_store(backend: str, workdir: Path) -> Iterator[str]:
    """A migrated empty store (SQLite file, or a ``bench_rs_`` PostgreSQL database), removed
    afterwards."""
    from sqlalchemy import create_engine, text

    from evalq.store.db import engine_for, upgrade

    if backend == "sqlite":
        url = f"sqlite:///{workdir / f'read_scale_{uuid.uuid4().hex[:6]}.db'}"
        upgrade(url)
        try:
            yield url
        finally:
            engine_for(url).dispose()
        return
    name = f"bench_rs_{uuid.uuid4().hex[:10]}"
    admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    url = PG_ADMIN.rsplit("/", 1)[0] + f"/{name}"
    try:
        upgrade(url)
        yield url
    finally:
        engine_for(url).dispose()
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@contextmanager
def running_api(url: str, workdir: Path, timeout: float) -> Iterator[tuple[httpx.Client, int]]:
    """`evalq api` on ``url``; a client signed in to the UI and holding a ``read`` key, and the
    API's pid."""
    from evalq.store.db import session_scope
    from evalq.store.keys import create_key

    with session_scope(url) as session:
        key = create_key(session, name=f"bench-{uuid.uuid4().hex[:6]}", scopes=["read"])
    port = next((p for p in PORTS if port_free(p)), None) or free_port()
    base = f"http://127.0.0.1:{port}"
    settings = {"database_url": url, "broker_url": redis_url(DB), "result_backend": redis_url(DB)}
    argv = ["api", "--port", str(port), "--log-level", "warning"]
    process = start(argv, evalq_env(**settings), workdir / f"api_{port}.log")
    try:
        wait_for_http(f"{base}/healthz", process, timeout=120, what="evalq api")
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(base_url=base, headers=headers, timeout=timeout) as client:
            signed = sign_in(client, key)
            if signed.status_code != 303:
                raise RuntimeError(f"sign-in failed: {signed.status_code} {signed.text[:300]}")
            yield client, process.pid
    finally:
        stop(process)


def port_free(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def get(client: httpx.Client, path: str) -> float | str:
    """Seconds to read ``path`` whole, or what went wrong (``HTTP 500``, ``timeout``)."""
    started = time.perf_counter()
    try:
        answer = client.get(path)
    except httpx.TimeoutException:
        return "timeout"
    except httpx.HTTPError as error:
        return f"error {type(error).__name__}"
    if not answer.is_success:
        return f"HTTP {answer.status_code}"
    return time.perf_counter() - started


def timed(
    client: httpx.Client, path: str, repeat: int, before: Callable[[], None] | None
) -> Timing:
    """``repeat`` reads of ``path``, ``before()`` ahead of each one when given."""
    timing = Timing()
    for _ in range(repeat):
        if before:
            before()
        found = get(client, path)
        if isinstance(found, str):
            timing.failures.append(found)
            if found == "timeout":  # the server may still be at it: do not pile up more
                break
        else:
            timing.seconds.append(found)
    return timing


def report_timing(url: str, task_id: str, repeat: int, workdir: Path, timeout: float) -> Timing:
    """``evalq report TASK`` (HTML) as a process, ``repeat`` times: seconds, size, peak RSS."""
    import subprocess

    timing, peak, size = Timing(), 0, 0
    output = workdir / "report.html"
    for _ in range(repeat):
        started = time.perf_counter()
        with (workdir / "report.log").open("wb") as log:
            process = subprocess.Popen(
                [EVALQ, "report", task_id, "-o", str(output)],
                env=evalq_env(database_url=url),
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            killer = threading.Timer(timeout, process.kill)
            killer.start()
            _, status, usage = os.wait4(process.pid, 0)
            killer.cancel()
            process.returncode = os.waitstatus_to_exitcode(status)
        elapsed = time.perf_counter() - started
        if process.returncode:
            timing.failures.append("timeout" if elapsed >= timeout else "failed")
            break
        timing.seconds.append(elapsed)
        peak, size = max(peak, usage.ru_maxrss), output.stat().st_size
    if timing.seconds:
        timing.note = f"[{size / 1e6:.1f} MB, {peak / 1024:.0f} MiB]"
    return timing


def cheap_during_heavy(
    client: httpx.Client, cheap: str, heavy: str, repeat: int, change: Callable[[], None]
) -> tuple[Timing, Timing]:
    """``cheap`` read alone, then while ``heavy`` first visits run back to back in a thread."""
    alone = timed(client, cheap, repeat, None)
    done = threading.Event()

    def load() -> None:
        while not done.is_set():
            change()
            get(client, heavy)

    loader = threading.Thread(target=load)
    loader.start()
    time.sleep(0.2)  # the first heavy read is under way
    try:
        during = timed(client, cheap, repeat, None)
    finally:
        done.set()
        loader.join()
    return alone, during


def measure_size(
    store: Store,
    client: httpx.Client,
    pid: int,
    size: int,
    options: argparse.Namespace,
    workdir: Path,
) -> dict[str, Timing | str]:
    """Every read on the tasks of ``size`` runs; its cells by row name."""
    started = time.perf_counter()
    chosen = {kind: example_of(store.examples, kind) for kind in options.kinds}
    cloned = store.examples if options.clone == "every" else list(chosen.values())
    created = add_clones(store.url, cloned, size)
    found: dict[str, Timing | str] = {"store: built in": shown(time.perf_counter() - started)}
    found["store: runs in the store"] = f"{store_runs(store.url):,}"
    print(f"# {found['store: runs in the store']} runs, built in {found['store: built in']}")
    tasks = {kind: created[example.task["id"]] for kind, example in chosen.items()}

    def change(kind: str) -> Callable[[], None]:
        return lambda: store.change(chosen[kind], tasks[kind])

    last_page, last_offset = max(1, math.ceil(size / 50)), max(0, size - 50)
    reads: list[tuple[str, str, str]] = []
    for kind, task in tasks.items():
        board = f"/v1/tasks/{task}/leaderboard?limit=50"
        reads += [
            (f"UI board {kind}, page 1", f"/ui/tasks/{task}", kind),
            (f"UI board {kind}, last page", f"/ui/tasks/{task}?page={last_page}", kind),
            (f"API board {kind}, limit 50", board, kind),
            (f"API board {kind}, last 50", f"{board}&offset={last_offset}", kind),
        ]
    home = "arena" if "arena" in tasks else next(iter(tasks))
    arena = tasks[home]
    pair = "&".join(f"values={m}" for m in COMPARED)
    traced = "peerread" if "peerread" in tasks else home  # its runs have traces and tier rows
    reads += [
        ("tasks page /", "/", home),
        ("/ui/review", "/ui/review", home),
        ("/metrics", "/metrics", home),
        ("UI compare, 2 models", f"/ui/compare?tasks={arena}&by=model&{pair}", home),
        ("GET /v1/compare, 2 models", f"/v1/compare?tasks={arena}&by=model&{pair}", home),
        ("run page /ui/runs/ID", f"/ui/runs/{clone_run_id(tasks[traced], 0)}", traced),
    ]
    store.merges = Timing()
    for name, path, kind in reads:
        if not any(part in name for part in options.reads):
            continue
        first = found[f"{name}: first"] = timed(client, path, options.repeat, change(kind))
        store.refresh(tasks[kind])  # as a worker would, once the merges stop
        again = found[f"{name}: again"] = timed(client, path, options.repeat, None)
        print(f"  {name}: first {first.cell()}, again {again.cell()}", flush=True)
    found["merge of one run (merge_tiers, projection included)"] = store.merges
    if "report" in options.reads:
        found["evalq report TASK (CLI process)"] = report_timing(
            store.url, arena, options.repeat, workdir, options.timeout
        )
    cheap = f"/v1/submissions/{clone_run_id(arena, 1)}"
    alone, during = cheap_during_heavy(
        client, cheap, f"/ui/tasks/{arena}", options.repeat, change(home)
    )
    found["GET /v1/submissions/ID alone"] = alone
    found["GET /v1/submissions/ID, UI boards meanwhile"] = during
    if alone.seconds and during.seconds:
        found["cheap read: during / alone (p50)"] = f"{during.p(0.5) / alone.p(0.5):.1f}x"
    status = Path(f"/proc/{pid}/status").read_text()
    peak = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM"))
    found["API RSS after the reads (peak)"] = f"{rss_kib(pid) / 1024:.0f} MiB ({peak / 1024:.0f})"
    return found


def example_of(examples: list[Example], kind: str) -> Example:
    """The example task of ``kind`` with the most runs."""
    return max((e for e in examples if e.kind == kind), key=lambda e: len(e.runs))


def store_runs(url: str) -> int:
    from sqlalchemy import func, select

    from evalq.store.db import session_scope
    from evalq.store.models import SubmissionRow

    with session_scope(url) as session:
        return int(session.scalar(select(func.count()).select_from(SubmissionRow)) or 0)


def print_table(backend: str, sizes: list[int], results: dict[int, dict[str, Timing | str]]):
    rows = list(dict.fromkeys(name for size in sizes for name in results[size]))
    cells = {
        (name, size): (lambda c: c if isinstance(c, str) else c.cell())(
            results[size].get(name, "-")
        )
        for name in rows
        for size in sizes
    }
    widths = {s: max(len(f"{s:,} runs/task"), *(len(cells[n, s]) for n in rows)) + 2 for s in sizes}
    label = max(map(len, rows)) + 2
    print(f"\n## {backend}: p50 / p95 (p95 / 300 ms)")
    print(f"{'read':<{label}}" + "".join(f"{f'{s:,} runs/task':>{widths[s]}}" for s in sizes))
    for name in rows:
        print(f"{name:<{label}}" + "".join(f"{cells[name, s]:>{widths[s]}}" for s in sizes))


def worst(results: dict[int, dict[str, Timing | str]]) -> tuple[str, float]:
    """The row with the largest p95 (a failed read counts as infinite)."""
    figures = {
        name: (cell.p(0.95) if cell.seconds else math.inf)
        for name, cell in results.items()
        if isinstance(cell, Timing)
        and "alone" not in name
        and "meanwhile" not in name
        and not name.startswith("merge")  # a write, not a read
    }
    name = max(figures, key=lambda n: figures[n])
    return name, figures[name] / GOAL_S


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument(
        "--backends", nargs="+", choices=["sqlite", "postgresql"], default=["sqlite", "postgresql"]
    )
    parser.add_argument("--repeat", type=int, default=5, help="requests per read")
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument(
        "--reads",
        nargs="+",
        default=["board", "tasks", "review", "metrics", "compare", "run", "report"],
        help="the reads to time: rows whose name contains one of these words (and the cheap "
        "read, always)",
    )
    parser.add_argument("--timeout", type=float, default=600, help="seconds per request")
    parser.add_argument(
        "--clone",
        choices=["every", "read"],
        default="every",
        help="clone every example task at each size (the store the tasks page reads), or only "
        "the one task per kind the reads time (a store a fraction of the size, built faster)",
    )
    # quick: every kind (the suite board's rank intervals are drawn by the refresh and kept,
    # not per read: docs/scoring.md, "Rank uncertainty")
    quick = {"sizes": [50, 150], "backends": ["sqlite"], "repeat": 2}
    options = parse_args(parser, quick=quick)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the API on the way out
    from evalq.workers.bootstrap import worker_app

    results: dict[str, dict[int, dict[str, Timing | str]]] = {}
    with tempfile.TemporaryDirectory(prefix="evalq-bench-") as directory:
        workdir = Path(directory)
        started = time.perf_counter()
        examples = read_examples(merged_examples(workdir))
        merged = ", ".join(f"{e.task['id']} ({e.kind}, {len(e.runs)})" for e in examples)
        print(f"# examples merged by evalq demo in {time.perf_counter() - started:.1f} s: {merged}")
        for backend in options.backends:
            with new_store(backend, workdir) as url:
                # this process merges the "first visit" runs: memory:// broker, no debounce
                apply_env(evalq_env(database_url=url, baseline_refresh_debounce_s="3600"))
                app = worker_app()
                app.set_current()
                store = Store(url, examples)
                results[backend] = {}
                with running_api(url, workdir, options.timeout) as (client, pid):
                    for size in options.sizes:
                        print(f"# {backend}, {size:,} runs per task", flush=True)
                        results[backend][size] = measure_size(
                            store, client, pid, size, options, workdir
                        )
                app.close()
    for backend in options.backends:
        print_table(backend, options.sizes, results[backend])
    largest = max(options.sizes)
    backend = options.backends[0]
    name, value = worst(results[backend][largest])
    ratio(f"{backend} worst p95 / 300 ms at {largest:,} runs per task ({name})", value)


if __name__ == "__main__":
    main()
