"""The web UI on a real `evalq api`: each page's server time, and what open live pages cost.

    python bench/ui_live.py [--runs 2000] [--pages 100] [--window 30] [--quick]

Builds a throwaway SQLite store with one Arena task of ``--runs`` evaluated submissions (rows
written in bulk, `tests/support/compare_store.py`) and starts `evalq api` on it (Redis db 12 as
the broker, which these reads never use). Signs in through the form, then measures:

- each page's server time (tasks list, the board, a run, review, the labelling queue,
  compare): median and p95 of full renders, the task touched before each so nothing is served
  from the UI's memo; and the board again with nothing changed (what a second viewer of the
  same version costs);
- ``--pages`` open live pages (a third each: the tasks list, the board, a run) polling every
  5 s as ui.js does, for ``--window`` seconds while nothing changes: the API process's CPU time
  (utime + stime from /proc) as a share of one core, with ``If-None-Match`` (the UI: 304s) and
  without it (every poll renders the page), side by side.

- the same pages followed through ``GET /ui/events`` (Server-Sent Events: one open response
  each, the page's version read once per 5 s per page, whatever the number of streams on it).

The last line is the ratio: the CPU share of one core the idle live pages cost with ETags (the
issue's target: under 0.05). ``--quick`` (100 runs, 10 pages, 6 s) runs in seconds for CI.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from _common import figure, parse_args, ratio, redis_url
from tests.support.compare_store import add_evaluated, bulk_submission, put_tasks
from tests.support.databases import fresh_database
from tests.support.processes import HTTP_TIMEOUT, free_port, process_env, start, stop, wait_for_http
from tests.support.ui import sign_in

from evalq.core.schemas import Task

DB = 12
POLL_S = 5.0
"""ui.js's interval (data-live on a page's <main>)."""
TICKS = os.sysconf("SC_CLK_TCK")


def build(db_url: str, runs: int) -> None:
    """One Arena task ``t000`` with ``runs`` evaluated runs by four models."""
    from evalq.store.db import session_scope

    task = Task(id="t000", kind="arena")
    submissions = [
        bulk_submission(f"s{n:06d}", "t000", model=f"m{n % 4:02d}", seed=n) for n in range(runs)
    ]
    with session_scope(db_url) as session:
        put_tasks(session, [task])
    with session_scope(db_url) as session:
        add_evaluated(session, {"t000": task}, submissions)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def touch(db_url: str) -> None:
    """Move the task's version, as putting it again does: the next page read is computed anew
    (not served from the UI's memo of the last read)."""
    from sqlalchemy import update

    from evalq.store.db import session_scope
    from evalq.store.models import TaskRow, utcnow

    with session_scope(db_url) as session:
        session.execute(update(TaskRow).values(updated_at=utcnow()))


def page_times(
    client: httpx.Client, path: str, repeats: int, db_url: str | None
) -> tuple[float, float]:
    """Median and p95 seconds of ``repeats`` full renders of ``path`` (after one warm-up), the
    task touched before each when ``db_url`` is given."""
    client.get(path).raise_for_status()
    times = []
    for _ in range(repeats):
        if db_url:
            touch(db_url)
        started = time.perf_counter()
        client.get(path).raise_for_status()
        times.append(time.perf_counter() - started)
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, int(0.95 * len(times)))]


async def open_pages(
    url: str, cookies: dict[str, str], paths: list[str], window: float, etags: bool, pid: int
) -> tuple[int, int, float]:
    """``paths`` opened, then polled every `POLL_S` for ``window`` seconds: polls answered 304,
    all polls, and the CPU share of one core process ``pid`` used while they polled."""
    limits = httpx.Limits(max_connections=len(paths), max_keepalive_connections=len(paths))
    async with httpx.AsyncClient(
        base_url=url, cookies=cookies, limits=limits, timeout=60
    ) as client:
        counts = [0, 0]
        tags = [(await client.get(path)).headers["etag"] for path in paths]  # the first visits
        before, clock = cpu_seconds(pid), time.monotonic()

        async def page(index: int, path: str) -> None:
            tag = tags[index]
            await asyncio.sleep(POLL_S * index / len(paths))  # pages opened at different times
            deadline = time.monotonic() + window
            while time.monotonic() < deadline:
                headers = {"X-Evalq-Live": "1"} | ({"If-None-Match": tag} if etags else {})
                try:
                    answer = await client.get(path, headers=headers)
                except httpx.TransportError:  # a kept-alive connection the server just closed
                    answer = await client.get(path, headers=headers)
                counts[0] += answer.status_code == 304
                counts[1] += 1
                await asyncio.sleep(POLL_S)

        await asyncio.gather(*(page(i, p) for i, p in enumerate(paths)))
        share = (cpu_seconds(pid) - before) / (time.monotonic() - clock)
    return counts[0], counts[1], share


async def open_streams(
    url: str, cookies: dict[str, str], paths: list[str], window: float, pid: int
) -> tuple[int, float]:
    """``paths`` followed through ``GET /ui/events`` (Server-Sent Events) for ``window`` seconds:
    streams that opened, and the CPU share of one core process ``pid`` used meanwhile."""
    limits = httpx.Limits(max_connections=len(paths), max_keepalive_connections=len(paths))
    async with httpx.AsyncClient(
        base_url=url, cookies=cookies, limits=limits, timeout=window + 60
    ) as client:
        opened = 0
        ready = asyncio.Event()

        async def follow(path: str) -> None:
            nonlocal opened
            async with client.stream("GET", "/ui/events", params={"page": path}) as answer:
                answer.raise_for_status()
                async for line in answer.aiter_lines():
                    if line.startswith("event: open"):
                        opened += 1
                        if opened == len(paths):
                            ready.set()
                    if stop.is_set():
                        return

        stop = asyncio.Event()
        tasks = [asyncio.create_task(follow(p)) for p in paths]
        await asyncio.wait_for(ready.wait(), timeout=120)
        before, clock = cpu_seconds(pid), time.monotonic()
        await asyncio.sleep(window)
        share = (cpu_seconds(pid) - before) / (time.monotonic() - clock)
        stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return opened, share


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--window", type=float, default=30.0)
    options = parse_args(parser, quick={"runs": 100, "pages": 10, "window": 6.0})
    repeats = 3 if options.quick else 10
    from evalq.store.db import session_scope
    from evalq.store.keys import create_key

    with (
        tempfile.TemporaryDirectory() as directory,
        fresh_database("sqlite", Path(directory)) as db,
    ):
        started = time.perf_counter()
        build(db, options.runs)
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
        try:
            wait_for_http(f"{url}/healthz", process, timeout=90, what="evalq api")
            with httpx.Client(base_url=url, timeout=HTTP_TIMEOUT) as browser:
                sign_in(browser, key)
                cookies = {"evalq_session": browser.cookies["evalq_session"]}
            assert cookies, "sign-in failed"
            pages = {
                "tasks list": "/",
                f"board ({options.runs} runs)": "/ui/tasks/t000",
                "run": "/ui/runs/s000000",
                "review": "/ui/review",
                "labelling queue (one task)": "/ui/labels?task=t000",
                "labelling queue (all tasks)": "/ui/labels",
                "compare (2 models)": "/ui/compare?tasks=t000&by=model&values=m00&values=m01",
            }
            with httpx.Client(base_url=url, cookies=cookies, timeout=600) as client:
                for name, path in pages.items():
                    median, p95 = page_times(client, path, repeats, db)
                    figure(f"page {name}: median", median, "s")
                    figure(f"page {name}: p95", p95, "s")
                median, p95 = page_times(client, "/ui/tasks/t000", repeats, None)
                figure("page board, data unchanged (the UI's memo): median", median, "s")
            live = ["/", "/ui/tasks/t000", "/ui/runs/s000000"]
            paths = [live[i % 3] for i in range(options.pages)]
            shares = {}
            for etags in (True, False):
                unchanged, polls, share = asyncio.run(
                    open_pages(url, cookies, paths, options.window, etags, process.pid)
                )
                label = "with ETag (304)" if etags else "without ETag (full render)"
                figure(f"{options.pages} idle live pages {label}: polls", polls)
                figure("  answered 304", unchanged)
                figure("  API CPU, share of one core", share)
                shares[etags] = share
            opened, sse = asyncio.run(
                open_streams(url, cookies, paths, options.window, process.pid)
            )
            figure(f"{options.pages} idle live pages over Server-Sent Events: streams", opened)
            figure("  API CPU, share of one core", sse)
        finally:
            stop(process)
    figure("ratio CPU with ETag / without", shares[True] / max(shares[False], 1e-9))
    figure("ratio CPU Server-Sent Events / polling with ETag", sse / max(shares[True], 1e-9))
    ratio(
        f"{options.pages} idle live pages, API CPU share of one core (target < 0.05)", shares[True]
    )


if __name__ == "__main__":
    main()
