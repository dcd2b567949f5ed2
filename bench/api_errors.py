"""A maximum-size hostile body against a maximum-size valid one, on the real `evalq api`.

    python bench/api_errors.py [--repeat 3] [--max-batch 1000] [--size 5242880] [--quick]

Each body is as large as ``EVALQ_API_MAX_BODY_BYTES`` allows (5 MiB by default) and is sent
``--repeat`` times to its own fresh `evalq api` process (uvicorn, a throwaway SQLite store, Redis
db 12 as broker, flushed before and after): the valid batch of ``--max-batch`` submissions with
long traces (stored and enqueued, new ids each time), and each hostile shape of
`tests/support/hostile.py`. Printed per body: the median request time, the API process's peak
RSS growth (VmHWM after the requests minus VmRSS before them), the 422's size and problem count,
and the slowest ``GET /healthz`` answered while the body was being handled. The last lines are
the worst hostile/valid ratios of time and of peak memory.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
from _common import figure, flush, parse_args, ratio, redis_url
from tests.support.databases import fresh_database
from tests.support.hostile import HOSTILE, valid_batch
from tests.support.processes import free_port, process_env, start, stop, wait_for_http

DB = 12
TASK = {"id": "t1", "category": "debugging"}


@dataclass(frozen=True)
class Measured:
    """One body's figures."""

    seconds: float
    peak_mib: float
    status: int
    response_bytes: int
    listed: int
    more: int
    healthz_max_s: float


def status_kib(pid: int, field: str) -> int:
    """A ``VmRSS`` / ``VmHWM`` figure of /proc/PID/status, in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} for pid {pid}")


def slowest_healthz(url: str, done: threading.Event, slowest: list[float]) -> None:
    """Poll ``/healthz`` until ``done``; keep the longest answer time in ``slowest[0]``."""
    with httpx.Client(timeout=120) as client:
        while not done.is_set():
            started = time.perf_counter()
            client.get(f"{url}/healthz")
            slowest[0] = max(slowest[0], time.perf_counter() - started)
            time.sleep(0.05)


def measure(bodies: Callable[[int], bytes], repeat: int, max_batch: int, work: Path) -> Measured:
    """Send ``bodies(i)`` for i in range(repeat) to a fresh API and measure it."""
    from evalq.store.db import session_scope
    from evalq.store.keys import create_key

    with fresh_database("sqlite", Path(tempfile.mkdtemp(dir=work))) as db_url:
        settings = {
            "database_url": db_url,
            "broker_url": redis_url(DB),
            "result_backend": redis_url(DB),
            "api_max_batch": str(max_batch),
        }
        with session_scope(db_url) as session:
            key = create_key(session, name="bench", scopes=["read", "write"])
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        args = ["api", "--port", str(port), "--log-level", "warning"]
        process = start(args, process_env(settings), work / f"api-{port}.log")
        try:
            wait_for_http(f"{url}/healthz", process, timeout=90, what="evalq api")
            headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
            with httpx.Client(base_url=url, headers=headers, timeout=600) as client:
                assert client.put("/v1/tasks/t1", json=TASK).status_code == 201
                before = status_kib(process.pid, "VmRSS")
                times, slowest, done = [], [0.0], threading.Event()
                poller = threading.Thread(target=slowest_healthz, args=(url, done, slowest))
                poller.start()
                try:
                    for index in range(repeat):
                        body = bodies(index)
                        started = time.perf_counter()
                        response = client.post("/v1/submissions", content=body)
                        times.append(time.perf_counter() - started)
                finally:
                    done.set()
                    poller.join()
                peak = status_kib(process.pid, "VmHWM") - before
        finally:
            stop(process)
    answer = response.json() if response.status_code == 422 else {}
    return Measured(
        seconds=statistics.median(times),
        peak_mib=peak / 1024,
        status=response.status_code,
        response_bytes=len(response.content),
        listed=len(answer.get("detail", [])),
        more=answer.get("more", 0),
        healthz_max_s=slowest[0],
    )


def report(name: str, measured: Measured) -> None:
    """Print one body's figures."""
    figure(f"{name}: status", measured.status)
    figure(f"{name}: median request time", measured.seconds, "s")
    figure(f"{name}: API peak RSS growth", measured.peak_mib, "MiB")
    figure(f"{name}: response size", measured.response_bytes, "bytes")
    if measured.status == 422:
        figure(f"{name}: problems listed", measured.listed)
        figure(f"{name}: problems counted but not listed", measured.more)
    figure(f"{name}: slowest /healthz meanwhile", measured.healthz_max_s, "s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-batch", type=int, default=1000)
    parser.add_argument(
        "--size", type=int, default=5 * 1024 * 1024, help="body size (EVALQ_API_MAX_BODY_BYTES)"
    )
    options = parse_args(parser, quick={"repeat": 1, "max_batch": 20, "size": 256 * 1024})
    flush(DB)
    try:
        with tempfile.TemporaryDirectory() as directory:
            work = Path(directory)
            valid = measure(
                lambda i: valid_batch(options.size, options.max_batch, f"v{i}"),
                options.repeat,
                options.max_batch,
                work,
            )
            report("valid batch", valid)
            hostile = {}
            for name, build in HOSTILE.items():
                body = build(options.size, options.max_batch)
                hostile[name] = measure(
                    lambda _, b=body: b, options.repeat, options.max_batch, work
                )
                report(name, hostile[name])
    finally:
        flush(DB)
    worst_time = max(m.seconds for m in hostile.values()) / valid.seconds
    worst_memory = max(m.peak_mib for m in hostile.values()) / valid.peak_mib
    figure("worst hostile / valid: request time", worst_time, "x")
    ratio("worst hostile / valid: API peak RSS growth", worst_memory, "x")


if __name__ == "__main__":
    main()
