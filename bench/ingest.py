"""The front door: `evalq api` against a bare FastAPI app, one client, side by side.

    python bench/ingest.py [--submissions 2000] [--batches 1 10 100]
                           [--backends sqlite postgresql] [--rss-rounds 3] [--quick]

For each backend, a real `evalq api` (uvicorn, a throwaway store, Redis db 11 as broker and
result store, no workers) and a bare app run at the same time: the bare app (in this file,
started as ``python bench/ingest.py --serve-bare``) parses the same JSON with a pydantic model,
inserts one row per submission with SQLAlchemy into its own store of the same backend and
publishes one Redis message per submission. One client posts ``--submissions`` new
submissions one per request, then in batches of 10 and 100, to each; the two servers take
turns in four slices, so both see the same load on a shared machine. Printed per batch size:
submissions per second of each, the median request time, and evalq / bare, of the same batch
size and of the bare app one at a time. The last lines are the goals, like for like: evalq /
bare one at a time (>= 0.5), and both in batches of 100 (>= 0.5). evalq's intake does more than
store and publish: a submission with nothing to fan out (this one: no references, no judge, a
trace) is evaluated as it is stored (its graph tier and merge), which the bare app never does.

The API's RSS is read after each phase and after each of ``--rss-rounds`` more rounds of
``--submissions`` in batches of 10: a leak keeps growing round after round, a warm-up levels off.

``--quick`` (CI): 40 submissions, one RSS round; seconds per backend, figures not asserted.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from _common import figure, flush, parse_args, ratio, redis_url, rss_kib
from pydantic import BaseModel
from tests.support.databases import fresh_database
from tests.support.processes import free_port, process_env, start, stop, wait_for_http

DB = 11
TASK = {"id": "t1", "category": "debugging", "success_criteria": [{"type": "no_errors"}]}
SLICES = 4
WARM_UP = 20


def submission(sid: str) -> dict[str, Any]:
    """A small submission with a three-step trace (its chord runs the graph tier and the merge)."""
    steps = [
        {"tool": tool, "started_at": start, "ended_at": start + 0.5, "agent": "aider"}
        for tool, start in (("list_files", 1.0), ("read_file", 2.0), ("edit_file", 3.0))
    ]
    return {
        "id": sid,
        "task_id": "t1",
        "tool": "aider",
        "model": "gpt-4o",
        "usage": {"input_tokens": 800, "output_tokens": 200, "tool_calls": 3, "execution_time": 12},
        "output": "Fixed the date parser and added a regression test.",
        "trace": {"steps": steps},
    }


# --- the bare app ----------------------------------------------------------------------------


class Usage(BaseModel):
    """The bare app's models: the same JSON, plain pydantic."""

    input_tokens: int
    output_tokens: int
    tool_calls: int
    execution_time: float


class Step(BaseModel):
    tool: str
    started_at: float
    ended_at: float
    agent: str


class Trace(BaseModel):
    steps: list[Step]


class Run(BaseModel):
    id: str
    task_id: str
    tool: str
    model: str
    usage: Usage
    output: str
    trace: Trace | None = None


class Batch(BaseModel):
    submissions: list[Run]


def bare_app(db_url: str, broker: str) -> Any:
    """FastAPI: pydantic parse, one row per submission (SQLAlchemy), one Redis message each."""
    import json

    import redis
    from fastapi import FastAPI
    from sqlalchemy import JSON, Column, MetaData, String, Table, create_engine, event, insert

    engine = create_engine(db_url)
    if engine.dialect.name == "sqlite":  # the durability evalq's producers keep: WAL, full sync

        @event.listens_for(engine, "connect")
        def _wal(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.execute("PRAGMA journal_mode=WAL")

    table = Table(
        "bare_runs", MetaData(), Column("id", String(128), primary_key=True), Column("run", JSON)
    )
    table.metadata.create_all(engine)
    queue = redis.Redis.from_url(broker)
    app = FastAPI()

    def store(runs: list[Run]) -> None:
        with engine.begin() as connection:
            connection.execute(insert(table), [{"id": r.id, "run": r.model_dump()} for r in runs])
        with queue.pipeline(transaction=False) as pipeline:
            for run in runs:
                pipeline.lpush("bare", json.dumps({"task": "evaluate", "args": [run.id]}))
            pipeline.execute()

    @app.post("/one", status_code=201)
    def one(run: Run) -> dict[str, Any]:
        store([run])
        return {"id": run.id, "created": True}

    @app.post("/batch", status_code=201)
    def batch(body: Batch) -> dict[str, Any]:
        store(body.submissions)
        return {"submissions": [{"id": r.id, "created": True} for r in body.submissions]}

    return app


def serve_bare(port: int, db_url: str, broker: str) -> None:
    """Run the bare app with uvicorn, as `evalq api` runs evalq's (one process, no access log)."""
    import uvicorn

    uvicorn.run(bare_app(db_url, broker), host="127.0.0.1", port=port, log_level="warning")


# --- the client ------------------------------------------------------------------------------


@dataclass
class Door:
    """One server and how to post to it."""

    name: str
    process: subprocess.Popen[bytes]
    http: httpx.Client
    one_path: str
    batch_path: str
    seconds: float = 0.0
    requests: list[float] = field(default_factory=list)

    def post(self, runs: list[dict[str, Any]]) -> None:
        """Post ``runs`` as one request (one submission, or a batch); fail on a non-2xx."""
        started = time.perf_counter()
        if len(runs) == 1:
            answer = self.http.post(self.one_path, json=runs[0])
        else:
            answer = self.http.post(self.batch_path, json={"submissions": runs})
        elapsed = time.perf_counter() - started
        if answer.status_code not in (200, 201):
            raise RuntimeError(f"{self.name}: {answer.status_code} {answer.text[:500]}")
        self.seconds += elapsed
        self.requests.append(elapsed)

    def send(self, prefix: str, count: int, batch: int) -> None:
        """Post ``count`` new submissions in requests of ``batch``."""
        for first in range(0, count, batch):
            size = min(batch, count - first)
            self.post([submission(f"{prefix}-{first + i}") for i in range(size)])


@contextmanager
def evalq_door(backend: str, work: Path) -> Iterator[Door]:
    """`evalq api` over a fresh store of ``backend``, Redis db 11, no workers."""
    from evalq.store.db import session_scope
    from evalq.store.keys import create_key

    directory = Path(tempfile.mkdtemp(dir=work))
    with fresh_database(backend, directory, prefix="evalq_bench_") as db_url:
        with session_scope(db_url) as session:
            key = create_key(session, name="bench", scopes=["read", "write"])
        settings = {"database_url": db_url, "broker_url": redis_url(DB)}
        settings["result_backend"] = redis_url(DB)
        port = free_port()
        args = ["api", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
        process = start(args, process_env(settings), directory / "api.log")
        url = f"http://127.0.0.1:{port}"
        headers = {"Authorization": f"Bearer {key}"}
        try:
            wait_for_http(f"{url}/healthz", process, timeout=90, what="evalq api")
            with httpx.Client(base_url=url, headers=headers, timeout=120) as http:
                assert http.put("/v1/tasks/t1", json=TASK).status_code in (200, 201)
                yield Door("evalq", process, http, "/v1/submissions", "/v1/submissions")
        finally:
            stop(process)


@contextmanager
def bare_door(backend: str, work: Path) -> Iterator[Door]:
    """The bare app over a fresh database of ``backend``, Redis db 11."""
    directory = Path(tempfile.mkdtemp(dir=work))
    with fresh_database(backend, directory, prefix="evalq_bench_bare_") as db_url:
        port = free_port()
        argv = [sys.executable, __file__, "--serve-bare", str(port), db_url, redis_url(DB)]
        with (directory / "bare.log").open("wb") as log:
            process = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        url = f"http://127.0.0.1:{port}"
        try:
            wait_for_http(f"{url}/docs", process, timeout=90, what="bare app")
            with httpx.Client(base_url=url, timeout=120) as http:
                yield Door("bare", process, http, "/one", "/batch")
        finally:
            stop(process)


def measure(doors: list[Door], count: int, batch: int, tag: str) -> dict[str, float]:
    """Submissions per second of each door: ``count`` in requests of ``batch``, in turns."""
    for door in doors:
        door.seconds, door.requests = 0.0, []
        door.send(f"{tag}-warm", WARM_UP * batch, batch)
        door.seconds, door.requests = 0.0, []
    per_slice = -(-count // SLICES)
    for index in range(SLICES):
        for door in doors:
            door.send(f"{tag}-{index}", min(per_slice, count - index * per_slice), batch)
    rates = {}
    for door in doors:
        rates[door.name] = count / door.seconds
        figure(f"  batch {batch:>3}: {door.name} submissions/s", rates[door.name], "/s")
        median_ms = statistics.median(door.requests) * 1000
        figure(f"  batch {batch:>3}: {door.name} median request", median_ms, "ms")
    return rates


def run_backend(
    backend: str, options: argparse.Namespace, work: Path
) -> tuple[dict[int, float], dict[int, float]]:
    """Every batch size against both doors on ``backend``; by size, evalq / bare in the same
    batches (like for like), and evalq / bare one at a time."""
    print(f"{backend}:", flush=True)
    same: dict[int, float] = {}
    goals: dict[int, float] = {}
    with ExitStack() as stack:
        evalq = stack.enter_context(evalq_door(backend, work))
        bare = stack.enter_context(bare_door(backend, work))
        rss = [("started", rss_kib(evalq.process.pid))]
        rates: dict[int, dict[str, float]] = {}
        for batch in options.batches:
            flush(DB)
            rates[batch] = measure([evalq, bare], options.submissions, batch, f"{backend}-{batch}")
            rss.append((f"after batch {batch}", rss_kib(evalq.process.pid)))
            same[batch] = rates[batch]["evalq"] / rates[batch]["bare"]
            figure(f"  batch {batch:>3}: evalq / bare (same batch)", same[batch], "x")
        for batch in options.batches:
            goals[batch] = rates[batch]["evalq"] / rates[options.batches[0]]["bare"]
            figure(f"  batch {batch:>3}: evalq / bare one at a time", goals[batch], "x")
        for round_ in range(options.rss_rounds):
            flush(DB)
            evalq.send(f"{backend}-rss-{round_}", options.submissions, 10)
            rss.append((f"after RSS round {round_ + 1}", rss_kib(evalq.process.pid)))
        for name, kib in rss:
            figure(f"  evalq api RSS {name}", kib / 1024, "MiB")
    flush(DB)
    return same, goals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--submissions", type=int, default=2000)
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgresql"])
    parser.add_argument("--rss-rounds", type=int, default=3)
    parser.add_argument("--serve-bare", nargs=3, metavar=("PORT", "DB_URL", "REDIS_URL"))
    options = parse_args(parser, quick={"submissions": 40, "rss_rounds": 1})
    if options.serve_bare:
        port, db_url, broker = options.serve_bare
        serve_bare(int(port), db_url, broker)
        return
    if options.batches[0] != 1:
        parser.error("--batches must start with 1 (the bare app's one-at-a-time rate)")
    flush(DB)
    goals = {}
    try:
        with tempfile.TemporaryDirectory() as directory:
            for backend in options.backends:
                goals[backend] = run_backend(backend, options, Path(directory))
    finally:
        flush(DB)
    largest = options.batches[-1]
    for backend, (same, _) in goals.items():
        figure(f"{backend}: evalq / bare, one at a time (goal >= 0.5)", same[1], "x")
        figure(
            f"{backend}: evalq / bare, both in batches of {largest} (goal >= 0.5)",
            same[largest],
            "x",
        )
    worst = min(min(same[1], same[largest]) for same, _ in goals.values())
    ratio("evalq / bare like for like, worst batch size and backend (goal >= 0.5)", worst)


if __name__ == "__main__":
    main()
