"""The queue's bookkeeping against the tiers' compute: CPU-seconds per evaluation, split.

    python bench/bookkeeping.py [--mix fresh|outside] [--submissions N]
                                [--backend postgresql|sqlite]
                                [--modes distributed embedded embedded-threads] [--quick]

N realistic submissions, in one of two mixes:

- **fresh** (255 by default): the bundled examples (`evalq demo`'s), cycled with new ids, their
  usage jittered, and each PeerRead output replaced by a review of the same length drawn from
  the bundled reviews' sentences (so no two outputs are the same text);
- **outside** (500 by default): the mix of issue 49's outside probe: the bundled examples of
  every kind cycled with new ids and their outputs as bundled, so most runs repeat an earlier
  output (copies); one in five is an exact copy of its bundled run (a content-identical
  resubmission, counted once), one in three of the others that carry a trace is sent without it
  (text-only), and the rest have their usage jittered.

They run through

- **distributed**: the README's workers as subprocesses (``evalq worker`` on evalq.text,
  prefork, 2 children; evalq.judge; evalq.graph,evalq.merge; evalq.webhooks) on Redis database
  12, with this process as the producer (`Client.submit_many`, batches of 100);
- **embedded**: no broker; the whole pipeline in this process (the `Client`'s in-process worker),
  tier 1 in its helper processes (`evalq.workers.text_helpers`, their CPU counted as evalq's);
- **embedded-threads**: the same with EVALQ_TEXT_HELPERS=0, tier 1 in the worker's own threads
  (how the in-process worker ran it before the helpers).

CPU-seconds are every evalq process's (user + system, read from /proc): the workers and their
children, and this process while it submits (distributed) or for the whole run (embedded).
Redis and PostgreSQL are not evalq's and are left out. Tier compute is the CPU time inside the
tiers' compute functions, wherever they run (bench/_compute_probe.py); everything else is
bookkeeping (intake, publishing, task overhead, sessions, merges, standings, refreshes, idle
polling). Each side is warmed up first (models loaded) and its warm-up left out. The PostgreSQL
databases the run creates are dropped at its end.

Printed per mode: CPU per evaluation, compute and bookkeeping per evaluation, and their ratio
(goal <= 0.2); tier 1's mean wall and CPU time per call, and each embedded mode's over
distributed (goal <= 1.3). Last line: the distributed ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import tempfile
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

import _compute_probe
from _common import (
    BIN,
    Worker,
    apply_env,
    evalq_env,
    figure,
    flush,
    parse_args,
    ratio,
    redis_url,
    review,
    review_sentences,
)

DB = 12
PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
BATCH = 100
WORKERS = (  # the README's "Running distributed"
    ["--queues", "evalq.text", "--concurrency", "2"],
    ["--queues", "evalq.judge", "--concurrency", "32"],
    ["--queues", "evalq.graph,evalq.merge"],
    ["--queues", "evalq.webhooks", "--pool", "threads"],
)
CLOCK = os.sysconf("SC_CLK_TCK")


def examples() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The bundled tasks and submissions, the submissions interleaved across their files (so
    any prefix holds every kind)."""
    from evalq.producer.cli.demo import EXAMPLES

    tasks = json.loads((EXAMPLES / "tasks.json").read_text())
    files = [
        [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        for path in sorted(EXAMPLES.glob("*.jsonl"))
    ]
    mixed = []
    for index in range(max(map(len, files))):
        mixed += [runs[index] for runs in files if index < len(runs)]
    return tasks, mixed


def submissions(prefix: str, count: int, rng: random.Random) -> list[dict[str, Any]]:
    """``count`` examples with new ids, jittered usage and fresh review-length PeerRead outputs."""
    _, bundled = examples()
    sentences = review_sentences()
    made = []
    for index in range(count):
        run = json.loads(json.dumps(bundled[index % len(bundled)]))
        run["id"] = f"{prefix}-{index}"
        usage = run.get("usage", {})
        if isinstance(usage.get("execution_time"), int | float):
            usage["execution_time"] = round(usage["execution_time"] * rng.uniform(0.8, 1.2), 3)
        if run["task_id"].startswith("peerread") and run.get("output"):
            run["output"] = review(rng, len(run["output"].split()), sentences)
        made.append(run)
    return made


def outside(prefix: str, count: int, rng: random.Random) -> list[dict[str, Any]]:
    """``count`` runs of issue 49's outside mix: the bundled runs of every kind cycled with new
    ids and their bundled outputs; one in five an exact copy of its bundled run, one in three
    of the others with a trace sent without it (text-only), the rest with jittered usage."""
    _, bundled = examples()
    made = []
    for index in range(count):
        original = bundled[index % len(bundled)]
        run = json.loads(json.dumps(original))
        run["id"] = f"{prefix}-{index}"
        if index % 5 != 0:  # else: the bundled run itself under a new id
            if run.get("trace") and index % 3 == 0:
                del run["trace"]
            usage = run.get("usage", {})
            if isinstance(usage.get("execution_time"), int | float):
                usage["execution_time"] = round(usage["execution_time"] * rng.uniform(0.8, 1.2), 3)
        made.append(run)
    return made


MIXES = {"fresh": (submissions, 255), "outside": (outside, 500)}


TASK_LINE = re.compile(r"Task (\S+)\[[^\]]+\] succeeded in ([0-9.e-]+)s")


def task_times(log: Path) -> dict[str, list[float]]:
    """Run time of every succeeded task in a worker log, by task name."""
    times: dict[str, list[float]] = defaultdict(list)
    for match in TASK_LINE.finditer(log.read_text(errors="replace")):
        times[match.group(1)].append(float(match.group(2)))
    return times


def group_cpu_s(pgid: int) -> float:
    """User + system CPU seconds of every live process in process group ``pgid``."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # field 5, pgrp (fields[0] is field 3, state)
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / CLOCK


def own_cpu_s() -> float:
    """This process's user + system CPU seconds, all threads."""
    times = os.times()
    return times.user + times.system


def run_all(client: Any, runs: list[dict[str, Any]]) -> tuple[float, float]:
    """Submit ``runs`` in batches and wait for them; (CPU s of this process while submitting,
    wall s of the whole run)."""
    start, cpu = time.perf_counter(), 0.0
    ids = []
    for first in range(0, len(runs), BATCH):
        before = own_cpu_s()
        ids += [s.id for s in client.submit_many(runs[first : first + BATCH])]
        cpu += own_cpu_s() - before
    statuses = client.wait(ids, timeout=3600, poll=0.5)
    bad = {k: v for k, v in statuses.items() if v not in ("done", "degraded")}
    if bad:
        raise RuntimeError(f"{len(bad)} submissions not evaluated, e.g. {list(bad.items())[:3]}")
    return cpu, time.perf_counter() - start


def queues_empty(url: str) -> bool:
    import redis

    from evalq.workers.names import QUEUES

    with redis.Redis.from_url(url) as broker:
        return all(broker.llen(queue) == 0 for queue in QUEUES) and not broker.hlen("unacked")


def database(backend: str, workdir: Path, name: str) -> str:
    from sqlalchemy import create_engine, text

    from evalq.store.db import upgrade

    if backend == "sqlite":
        url = f"sqlite:///{workdir / f'{name}.db'}"
    else:
        db = f"evalq_bench_{uuid.uuid4().hex[:10]}"
        admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{db}"'))
        admin.dispose()
        url = PG_ADMIN.rsplit("/", 1)[0] + f"/{db}"
    upgrade(url)
    return url


def drop_database(url: str) -> None:
    """Drop a PostgreSQL database `database` created (a SQLite file goes with its directory)."""
    if not url.startswith("postgresql"):
        return
    from sqlalchemy import create_engine, text

    from evalq.store.db import engine_for

    engine_for(url).dispose()
    admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        name = url.rsplit("/", 1)[1]
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def forget(probe: Path) -> None:
    """Drop the probe's records so far (the warm-up's)."""
    for path in probe.glob("*.tsv"):
        path.unlink()


def measured(probe: Path, count: int, cpu_s: float, wall_s: float) -> dict[str, Any]:
    """The figures of one mode from the probe's records."""
    records = _compute_probe.records(probe)
    by_tier: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for tier, cpu, wall in records:
        by_tier[tier].append((cpu, wall))
    compute = sum(cpu for cpu, _ in (r for rs in by_tier.values() for r in rs))
    return {
        "count": count,
        "cpu": cpu_s,
        "wall": wall_s,
        "compute": compute,
        "tiers": {tier: len(rows) for tier, rows in by_tier.items()},
        "text_wall": _mean([w for _, w in by_tier.get("text", [])]),
        "text_cpu": _mean([c for c, _ in by_tier.get("text", [])]),
    }


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def distributed(args: argparse.Namespace, workdir: Path, runs: list[dict[str, Any]]) -> dict:
    url = redis_url(DB)
    probe = workdir / "probe-distributed"
    probe.mkdir()
    db_url = database(args.backend, workdir, "distributed")
    settings = {"database_url": db_url, "broker_url": url, "result_backend": url}
    env = evalq_env(**settings) | {_compute_probe.DIRECTORY: str(probe)}
    flush(DB)
    apply_env(env)
    os.environ[_compute_probe.DIRECTORY] = str(probe)
    from evalq.service.client import Client

    client = Client()
    for task in examples()[0]:
        client.put_task(task)
    workers = []
    try:
        for index, argv in enumerate(WORKERS):
            command = [str(BIN / "evalq"), "worker", *argv, "--include", "_compute_probe"]
            command += ["--loglevel", "INFO"]
            workers.append(Worker(command, env, workdir / f"worker-{index}.log"))
        for started in workers:
            started.wait_ready()
        run_all(client, submissions("warm", args.warm, random.Random(7)))  # models loaded
        while not queues_empty(url):
            time.sleep(0.2)
        warm = [task_times(w.log) for w in workers]
        forget(probe)
        cpu_before = [group_cpu_s(w.pid) for w in workers]
        before = sum(cpu_before)
        producer_cpu, wall = run_all(client, runs)
        while not queues_empty(url):  # the refreshes and webhooks the run scheduled
            time.sleep(0.2)
        time.sleep(1.0)
        after = [group_cpu_s(w.pid) for w in workers]
        workers_cpu = sum(after) - before
    finally:
        for started in workers:
            started.stop()
        client.app.close()
        flush(DB)
        drop_database(db_url)
    found = measured(probe, len(runs), producer_cpu + workers_cpu, wall)
    found["tasks"] = {}
    for before_run, started in zip(warm, workers, strict=True):
        for name, times in task_times(started.log).items():
            found["tasks"][name] = times[len(before_run.get(name, [])) :]
    found["processes"] = {"producer (intake, merges at intake)": producer_cpu} | {
        " ".join(argv[1:2]): end - start
        for argv, start, end in zip(WORKERS, cpu_before, after, strict=True)
    }
    return found


def embedded(
    args: argparse.Namespace, workdir: Path, runs: list[dict[str, Any]], *, helpers: bool = True
) -> dict:
    name = "embedded" if helpers else "embedded-threads"
    probe = workdir / f"probe-{name}"
    probe.mkdir()
    db_url = database(args.backend, workdir, name)
    apply_env(evalq_env(database_url=db_url, **({} if helpers else {"text_helpers": "0"})))
    os.environ[_compute_probe.DIRECTORY] = str(probe)
    from evalq.service.client import Client
    from evalq.workers import text_helpers

    client = Client()
    assert client.in_process
    for task in examples()[0]:
        client.put_task(task)
    try:
        with client:
            run_all(client, submissions("warm", args.warm, random.Random(7)))  # model loaded
            running = text_helpers.current()
            assert (running is not None) == helpers
            if running is not None:
                running.start_all()  # every helper's model loaded
            forget(probe)
            before = own_cpu_s() + (running.cpu_s() if running else 0.0)
            _, wall = run_all(client, runs)
            cpu = own_cpu_s() + (running.cpu_s() if running else 0.0) - before
    finally:
        client.app.close()
        drop_database(db_url)
    return measured(probe, len(runs), cpu, wall)


def report(mode: str, found: dict[str, Any]) -> float:
    count = found["count"]
    bookkeeping = found["cpu"] - found["compute"]
    print(f"# {mode}: {count} evaluations in {found['wall']:.1f} s; tier calls {found['tiers']}")
    figure(f"{mode}: evaluations per second", count / found["wall"], "/s")
    figure(f"{mode}: CPU per evaluation", found["cpu"] / count * 1000, "ms")
    figure(f"{mode}: tier compute per evaluation", found["compute"] / count * 1000, "ms")
    figure(f"{mode}: bookkeeping per evaluation", bookkeeping / count * 1000, "ms")
    figure(f"{mode}: tier 1 mean wall per call (in its slot)", found["text_wall"] * 1000, "ms")
    figure(f"{mode}: tier 1 mean CPU per call", found["text_cpu"] * 1000, "ms")
    for name, times in sorted(found.get("tasks", {}).items()):
        if times:
            mean = sum(times) / len(times) * 1000
            figure(f"{mode}: {name} task time, mean of {len(times)}", mean, "ms")
    for name, cpu in found.get("processes", {}).items():
        figure(f"{mode}: CPU of {name} per evaluation", cpu / count * 1000, "ms")
    share = bookkeeping / found["compute"] if found["compute"] else float("inf")
    figure(f"{mode}: bookkeeping / compute (goal <= 0.2)", share)
    return share


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mix", choices=sorted(MIXES), default="fresh")
    parser.add_argument("--submissions", type=int, help="255 for fresh, 500 for outside")
    parser.add_argument("--warm", type=int, default=20)
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="postgresql")
    parser.add_argument(
        "--modes",
        nargs="+",
        choices=["distributed", "embedded", "embedded-threads"],
        default=["distributed", "embedded"],
    )
    args = parse_args(parser, quick={"submissions": 6, "warm": 2, "backend": "sqlite"})
    make, default_count = MIXES[args.mix]
    runs = make("run", args.submissions or default_count, random.Random(12))
    found: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="evalq-bench-") as tmp:
        for mode in args.modes:
            if mode == "distributed":
                found[mode] = distributed(args, Path(tmp), runs)
            else:
                found[mode] = embedded(args, Path(tmp), runs, helpers=mode == "embedded")
    import torch

    from evalq.workers import bootstrap

    print(
        f"# mix={args.mix}, store={args.backend}, {os.cpu_count()} CPUs, load "
        f"{' '.join(f'{v:.1f}' for v in os.getloadavg())}; torch threads per tier-1 computation: "
        f"{bootstrap.torch_threads(2)} (distributed, 2 children), "
        f"{bootstrap.torch_threads(bootstrap.pool_children())} (embedded); "
        f"this process's torch default {torch.get_num_threads()}"
    )
    shares = {mode: report(mode, figures) for mode, figures in found.items()}
    for mode in ("embedded-threads", "embedded"):
        if {"distributed", mode} <= set(found):
            slower = found[mode]["text_wall"] / found["distributed"]["text_wall"]
            figure(f"{mode} / distributed tier 1 wall per call (goal <= 1.3)", slower)
    last = "distributed" if "distributed" in shares else next(iter(shares))
    ratio(f"bookkeeping / compute, {last} (goal <= 0.2)", shares[last])


if __name__ == "__main__":
    main()
