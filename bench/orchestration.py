"""Orchestration efficiency: evalq evaluations/s over bare Celery chords/s on the same workers.

    python bench/orchestration.py [--submissions 150] [--concurrency 2] [--pool prefork]
                                  [--backend sqlite|postgresql] [--quick]

Two worker subprocesses are run one after the other with the same pool and concurrency, on Redis
database 12 (flushed before each): first ``celery -A orchestration:bare worker`` for a bare chord
of three no-op tasks plus a callback (the app uses evalq's own Celery configuration: acks_late,
prefetch 1, JSON, events), then ``evalq worker`` on every evalq queue, judge skipped (no
EVALQ_JUDGE_MODEL), tier 1 on short review texts with the real BERTScore model, tier 3 on a small
trace, a throwaway SQLite file (or a fresh PostgreSQL database). Each side is warmed up, then the
rate is n / (time from the first submit until the last result). The workers' own per-task run
times (from their logs) show where evalq's time goes. Last line: the ratio (target >= 0.5).
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import tempfile
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

from _common import (
    BIN,
    apply_env,
    evalq_env,
    figure,
    flush,
    parse_args,
    ratio,
    redis_url,
    review_sentences,
    short_review,
    worker,
)
from celery import Celery, chord, group
from tests.support.reviews import review_task, review_trace

DB = 12
PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def bare_app() -> Celery:
    """The bare app: evalq's Celery configuration, two trivial tasks, nothing else."""
    from evalq.core.settings import Settings
    from evalq.workers.app import make_app

    url = redis_url(DB)
    app = make_app(Settings(broker_url=url, result_backend=url))
    app.task(name="bench.noop")(_noop)
    app.task(name="bench.callback")(_callback)
    return app


def _noop(index: int) -> int:
    return index


def _callback(results: list[int]) -> int:
    return len(results)


bare = bare_app()  # `celery -A orchestration:bare worker` imports this module


def run_bare(count: int) -> float:
    """Seconds from the first publish to the last callback result of ``count`` chords."""
    noop, callback = bare.tasks["bench.noop"], bare.tasks["bench.callback"]
    start = time.perf_counter()
    results = [
        chord(group(noop.s(i) for i in range(3)), callback.s()).apply_async() for _ in range(count)
    ]
    for result in results:
        assert result.get(timeout=600) == 3
    return time.perf_counter() - start


TASK = review_task("bench-orchestration")


def submissions(prefix: str, count: int, rng: random.Random) -> list[dict[str, Any]]:
    """Reviewer runs with short outputs and a small two-agent trace."""
    sentences = review_sentences()
    runs = []
    for index in range(count):
        tokens = rng.randint(500, 50_000)
        runs.append(
            {
                "id": f"{prefix}-{index}",
                "task_id": TASK["id"],
                "tool": "claude-code",
                "model": "claude-sonnet-4",
                "usage": {
                    "total_tokens": tokens,
                    "tool_calls": rng.randint(1, 20),
                    "execution_time": rng.uniform(5, 120),
                    "cost_usd": tokens / 100_000,
                },
                "output": short_review(rng, sentences),
                "trace": review_trace(),
            }
        )
    return runs


def run_evalq(client: Any, runs: list[dict[str, Any]]) -> float:
    """Seconds from submitting ``runs`` until every one is done (or degraded / failed)."""
    start = time.perf_counter()
    ids = [s.id for s in client.submit_many(runs)]
    statuses = client.wait(ids, timeout=1800, poll=0.05)
    elapsed = time.perf_counter() - start
    bad = {k: v for k, v in statuses.items() if v != "done"}
    if bad:
        raise RuntimeError(f"{len(bad)} submissions not done, e.g. {list(bad.items())[:3]}")
    return elapsed


TASK_LINE = re.compile(r"Task (\S+)\[[^\]]+\] succeeded in ([0-9.e-]+)s")


def task_times(log: Path) -> dict[str, list[float]]:
    """Run time of every succeeded task in a worker log, by task name."""
    times: dict[str, list[float]] = defaultdict(list)
    for match in TASK_LINE.finditer(log.read_text(errors="replace")):
        times[match.group(1)].append(float(match.group(2)))
    return times


def database(backend: str, workdir: Path) -> str:
    from sqlalchemy import create_engine, text

    from evalq.store.db import upgrade

    if backend == "sqlite":
        url = f"sqlite:///{workdir / 'orchestration.db'}"
    else:
        name = f"evalq_bench_{uuid.uuid4().hex[:10]}"
        admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
        admin.dispose()
        url = PG_ADMIN.rsplit("/", 1)[0] + f"/{name}"
    upgrade(url)
    return url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=150)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--pool", default="prefork")
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    args = parse_args(parser, quick={"submissions": 10, "concurrency": 1})
    count, pool, conc = args.submissions, args.pool, str(args.concurrency)
    url = redis_url(DB)
    with tempfile.TemporaryDirectory(prefix="evalq-bench-") as tmp:
        workdir = Path(tmp)
        db_url = database(args.backend, workdir)
        env = evalq_env(database_url=db_url, broker_url=url, result_backend=url)

        flush(DB)
        argv = [str(BIN / "celery"), "-A", "orchestration:bare", "worker", "-Q", "evalq.merge"]
        argv += ["-P", pool, "-c", conc, "--loglevel", "INFO", "--without-heartbeat"]
        with worker(argv, env, workdir / "bare.log"):
            run_bare(20)  # warm-up
            bare_s = run_bare(count)
        bare.close()

        flush(DB)
        apply_env(env)
        from evalq.service.client import Client

        client = Client()
        client.put_task(TASK)
        queues = "evalq.text,evalq.judge,evalq.graph,evalq.merge"
        argv = [str(BIN / "evalq"), "worker", "--queues", queues, "--pool", pool]
        argv += ["--concurrency", conc, "--loglevel", "INFO"]
        rng = random.Random(12)
        log = workdir / "evalq.log"
        with worker(argv, env, log):
            run_evalq(client, submissions("warm", 10, rng))  # warm-up: models loaded in children
            warm = {name: len(v) for name, v in task_times(log).items()}
            evalq_s = run_evalq(client, submissions("run", count, rng))
        client.app.close()
        flush(DB)
        times = task_times(log)

    print(f"# {count} per side, pool={pool} concurrency={conc}, store={args.backend}")
    for name, values in sorted(times.items()):
        measured = values[warm.get(name, 0) :]
        if measured:
            figure(f"evalq worker: {name} mean run time", statistics.mean(measured) * 1000, "ms")
            figure(f"evalq worker: {name} runs", len(measured))
    bare_rate, evalq_rate = count / bare_s, count / evalq_s
    figure("bare Celery chords (3 no-ops + callback) per second", bare_rate, "/s")
    figure("evalq evaluations (tier 1 + tier 3 + merge) per second", evalq_rate, "/s")
    ratio("orchestration efficiency evalq/bare (target >= 0.5)", evalq_rate / bare_rate)


if __name__ == "__main__":
    main()
