"""The read side at scale: one task with N evaluated runs, each read's time and the RSS it takes.

    python bench/read_scale.py [--sizes 1000 10000 100000] [--backends sqlite postgresql]
                               [--repeat 1] [--quick]

For each backend and size a fresh store gets one task with N evaluated runs, bulk-inserted as
`merge_scale.py` does (realistic payloads with a trace; the scores of one real merge of the
task, copied to every row; a real baseline refresh after the load). A second process, started
fresh for each store, then times the reads in process, each one's reply serialised to JSON as
the API would serve it:

- ``board``: the leaderboard's first page (``limit=50``) when the read side pages, else the
  whole board (all there was before pagination); ``board_all``: the whole board;
- ``run_list``: a task's 50 most recently updated runs (`queries.task_submissions`);
- ``run_detail``: one run's result (`read.submission.submission_result`);
- ``report``: the task's report (`report_data`, rendered as HTML);
- ``compare``: `compare` on the one task, by model (three models);

and the peak RSS growth of that process during each read (its ``VmHWM``, reset before the
read, minus its RSS then). Last line: the ratio N=largest / N=smallest of the first read
timed (by default the board's first page; target close to 1: a page must not grow with N).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from _common import ROOT, apply_env, evalq_env, figure, parse_args, ratio, rss_kib
from merge_scale import (
    TASK_ID,
    new_database,
    store_running,
    submission,
    task_definition,
    tier_metrics,
)

MODELS = ["claude-sonnet-4", "gpt-4o", "gemini-2.5-pro"]
READS = ("board", "board_all", "run_list", "run_detail", "report", "compare")
SEED_RUN = "seed-000000"
SAMPLE_OUTPUT = "Sparse attention; the baselines are weak."
WARM_TASK, WARM_RUNS = "bench-warm", 30
"""A small task every read runs on once before the timed reads (imports, caches, connections)."""


def populate(url: str, size: int, metrics: dict[str, dict[str, Any]]) -> None:
    """One task with ``size`` evaluated runs: the seed merged for real, the rest its copies."""
    from sqlalchemy import insert

    from evalq.core.schemas import Submission, Task, run_digests
    from evalq.store import queries
    from evalq.store.db import session_scope
    from evalq.store.models import EvaluationRow, SubmissionRow
    from evalq.tasks.merge import merge_tiers, refresh_baseline
    from evalq.workers.bootstrap import worker_app

    app = worker_app()  # memory:// broker: the refresh the merge schedules goes nowhere
    app.set_current()
    rng = random.Random(size)
    sample = submission("sample", random.Random(0), SAMPLE_OUTPUT)
    template = Submission.model_validate(sample).model_dump(mode="json")
    # a short output and distinct usage per row: no run is a copy of another
    outputs = [f"Review {i}: sparse attention; the baselines are weak." for i in range(size)]

    def row(sid: str, status: str, output: str, task_id: str = TASK_ID) -> dict[str, Any]:
        raw = submission(sid, rng, output) | {"task_id": task_id}
        # validated once; each row is the stored shape with its own id, output and usage
        payload = template | {k: raw[k] for k in ("id", "task_id", "tool", "model", "output")}
        payload["usage"] = template["usage"] | raw["usage"]
        usage = payload["usage"]
        run_hash, output_hash = run_digests(payload)
        return {
            "id": sid,
            "task_id": task_id,
            "content_hash": uuid.uuid4().hex * 2,
            "run_hash": run_hash,
            "output_hash": output_hash,
            "payload": payload,
            "status": status,
            "tool": payload["tool"],
            "model": payload["model"],
            "total_tokens": usage["total_tokens"],
            "tool_calls": usage["tool_calls"],
            "iterations": usage["iterations"],
            "execution_time": usage["execution_time"],
            "cost_usd": usage["cost_usd"],
        }

    with session_scope(url) as session:
        queries.put_task(session, task=Task.model_validate(task_definition()))
    [seed] = store_running(url, [row(SEED_RUN, "running", outputs[0])], metrics)
    merge_tiers(None, seed)
    with session_scope(url) as session:
        scores = session.get(EvaluationRow, seed).scores
    warm = [row(f"warm-{i:06d}", "done", outputs[i], WARM_TASK) for i in range(WARM_RUNS)]
    with session_scope(url) as session:
        queries.put_task(session, task=Task.model_validate(task_definition() | {"id": WARM_TASK}))
    for start in range(1, size, 5_000):
        rows = [
            row(f"old-{i:06d}", "done", outputs[i]) for i in range(start, min(size, start + 5_000))
        ]
        rows += warm if start == 1 else []
        evaluations = [
            {
                "submission_id": r["id"],
                "task_id": r["task_id"],
                "status": "done",
                "scores": scores,
                "missing_tiers": {},
                "baseline_version": 1,
                "profile_hash": "0" * 64,
            }
            for r in rows
        ]
        with session_scope(url) as session:
            session.execute(insert(SubmissionRow), rows)
            session.execute(insert(EvaluationRow), evaluations)
    refresh_baseline(TASK_ID)
    if url.startswith("postgresql"):
        from sqlalchemy import text

        from evalq.store.db import engine_for

        with engine_for(url).connect() as connection:  # what autovacuum does in steady state
            connection.execution_options(isolation_level="AUTOCOMMIT")
            connection.execute(text("VACUUM ANALYZE"))
    app.close()


def _paged(leaderboard: Any) -> bool:
    import inspect

    return "limit" in inspect.signature(leaderboard).parameters


def read_all(url: str, repeat: int, chosen: list[str]) -> dict[str, float]:
    """Seconds per read (best of ``repeat``) and the peak RSS growth (KiB), in this process."""
    import os

    from evalq.read.compare import compare
    from evalq.read.leaderboard import leaderboard
    from evalq.read.report_data import report_data
    from evalq.read.submission import submission_result
    from evalq.report import render
    from evalq.store import queries
    from evalq.store.db import session_scope

    paged = _paged(leaderboard)

    task_id, run_id = WARM_TASK, "warm-000000"

    def board(limit: int | None) -> str:
        with session_scope(url) as session:
            if paged:
                found = leaderboard(session, task_id=task_id, limit=limit)  # type: ignore[call-arg]
            else:
                found = leaderboard(session, task_id=task_id)
            return found.model_dump_json()

    def run_list() -> object:
        with session_scope(url) as session:
            return [r.id for r in queries.task_submissions(session, task_id=task_id, limit=50)]

    def run_detail() -> str:
        with session_scope(url) as session:
            return submission_result(session, submission_id=run_id).model_dump_json()

    def report() -> str:
        with session_scope(url) as session:
            return render(report_data(session, task_id=task_id), "html")

    def compared() -> str:
        with session_scope(url) as session:
            found = compare(session, tasks=task_id, by="model", values=MODELS)
            return found.model_dump_json()

    reads = {
        "board": lambda: board(50),
        "board_all": lambda: board(None),
        "run_list": run_list,
        "run_detail": run_detail,
        "report": report,
        "compare": compared,
    }
    for warm_up in reads.values():  # imports, caches and connections, on the small task
        warm_up()
    task_id, run_id = TASK_ID, SEED_RUN
    found: dict[str, float] = {}
    peak = 0
    for name in (r for r in READS if r in chosen):
        before = rss_kib(os.getpid())
        Path("/proc/self/clear_refs").write_text("5")  # the peak (VmHWM) starts again here
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            reads[name]()
            best = min(best, time.perf_counter() - start)
        found[name] = best
        found[f"{name}_rss_kib"] = float(peak_kib() - before)
        peak = max(peak, peak_kib() - before)
    return found | {"rss_growth_kib": float(peak)}


def peak_kib() -> int:
    """This process's peak resident set size in KiB (``VmHWM``) since the last reset."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc/self/status")


def child(args: argparse.Namespace) -> None:
    apply_env(
        evalq_env(
            database_url=args.url,
            baseline_refresh_debounce_s="3600",
            compare_max_submissions="1000000",
        )
    )
    print(json.dumps(read_all(args.url, args.repeat, args.reads)))


def run_child(role: str, url: str, size: int, repeat: int, reads: list[str]) -> str:
    """Run this script as a fresh process in ``role``; its stdout."""
    argv = [sys.executable, __file__, "--child", role, "--url", url, "--size", str(size)]
    argv += ["--repeat", str(repeat), "--reads", *reads]
    # the compare limit (50,000 rows by default) would refuse the largest task: measure it
    env = evalq_env(database_url=url, compare_max_submissions="1000000")
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"{role} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    return done.stdout


def measure(
    backend: str,
    size: int,
    repeat: int,
    workdir: Path,
    metrics: dict[str, dict[str, Any]],
    reads: list[str],
) -> dict[str, float]:
    url, drop = new_database(backend, workdir, size)
    try:
        started = time.perf_counter()
        apply_env(evalq_env(database_url=url, baseline_refresh_debounce_s="3600"))
        populate(url, size, metrics)
        print(f"# {backend} {size:,} runs stored in {time.perf_counter() - started:.1f} s")
        found: dict[str, float] = json.loads(
            run_child("read", url, size, repeat, reads).splitlines()[-1]
        )
        shown = ", ".join(
            f"{k} {v * 1000:.1f} ms (RSS +{found[f'{k}_rss_kib'] / 1024:.1f} MiB)"
            for k, v in found.items()
            if k in READS
        )
        print(f"# {backend} {size:,}: {shown}")
        return found
    finally:
        drop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument(
        "--backends", nargs="+", choices=["sqlite", "postgresql"], default=["sqlite", "postgresql"]
    )
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument(
        "--reads", nargs="+", choices=READS, default=list(READS), help="the reads to time"
    )
    parser.add_argument("--child", choices=["read"], help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    args = parse_args(parser, quick={"sizes": [300, 1_000]})  # both backends, every read
    if args.child:
        child(args)
        return
    results: dict[tuple[str, int], dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="evalq-bench-") as workdir:
        # real tier-1 and tier-3 metrics of one run (the model loads once, here)
        url, drop = new_database("sqlite", Path(workdir), 0)
        apply_env(evalq_env(database_url=url))
        sample = submission("sample", random.Random(0), SAMPLE_OUTPUT)
        metrics = tier_metrics(url, sample)
        drop()
        for backend in args.backends:
            for size in args.sizes:
                results[backend, size] = measure(
                    backend, size, args.repeat, Path(workdir), metrics, args.reads
                )
    small, large = min(args.sizes), max(args.sizes)
    print(f"# seconds per read (ms) by N; ratio N={large:,} / N={small:,}")
    for backend in args.backends:
        chosen = [r for r in READS if r in args.reads]
        for name in (*chosen, *(f"{r}_rss_kib" for r in chosen)):
            values = [results[backend, size][name] for size in args.sizes]
            shown = "  ".join(
                f"{size:>7,}: {v * 1000 if name in READS else v / 1024:>10.1f}"
                for size, v in zip(args.sizes, values, strict=True)
            )
            unit = "ms" if name in READS else "MiB"
            growth = values[-1] / values[0] if values[0] else float("inf")
            print(f"{backend:<10} {name:<15} {unit:<4} {shown}   x{growth:.1f}")
    for backend in args.backends:
        for name in (r for r in READS if r in args.reads):
            figure(f"{backend} {name} N={large:,}", results[backend, large][name] * 1000, "ms")
    first, read = args.backends[0], next(r for r in READS if r in args.reads)
    growth = results[first, large][read] / results[first, small][read]
    ratio(f"{first} {read} N={large:,} / N={small:,} (target ~1 for board, a page)", growth)


if __name__ == "__main__":
    main()
