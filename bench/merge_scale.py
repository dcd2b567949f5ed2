"""Merge-and-refresh cost per submission when the task already has 1,000 vs 100,000 submissions.

    python bench/merge_scale.py [--sizes 1000 100000] [--merges 200] [--refresh-every 50]
                                [--backend sqlite|postgresql] [--quick]

For each size a fresh store gets that many evaluated submissions (bulk-inserted through
SQLAlchemy, with realistic payloads and scores), then ``--merges`` new submissions whose three tier
rows are stored are merged one by one (`evalq.tasks.merge.merge_tiers`, in process) and, every
``--refresh-every`` merges, the baseline refresh they scheduled runs (what the debounce does: one
refresh shares the merges of its interval; 50 = ~25 merges/s x the default 2 s debounce). The cost
per submission is (merge time + refresh time) / merges. The same is measured with the previous
refresh (every submission row loaded, `compute_baseline` in Python) for comparison. A quarter of
``--merges`` untimed merges warm each store up first. Last line:
the ratio 100,000 / 1,000 of the current pipeline's cost per submission (target <= 2).
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import (
    apply_env,
    evalq_env,
    figure,
    parse_args,
    ratio,
    review_sentences,
    short_review,
)
from tests.support.reviews import review_task, review_trace

PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
TASK_ID = "bench-merge"


def task_definition() -> dict[str, Any]:
    return review_task(TASK_ID)


def submission(sid: str, rng: random.Random, output: str) -> dict[str, Any]:
    tokens = rng.randint(500, 60_000)
    return {
        "id": sid,
        "task_id": TASK_ID,
        "tool": rng.choice(["claude-code", "aider", "codex"]),
        "model": rng.choice(["claude-sonnet-4", "gpt-4o", "gemini-2.5-pro"]),
        "usage": {
            "total_tokens": tokens,
            "tool_calls": rng.randint(1, 40),
            "iterations": rng.randint(1, 6),
            "execution_time": round(rng.uniform(5, 600), 2),
            "cost_usd": tokens / 100_000,
        },
        "output": output,
        "trace": review_trace(),
    }


def new_database(backend: str, workdir: Path, size: int) -> tuple[str, Callable[[], None]]:
    """A migrated empty store and a function that drops it."""
    from sqlalchemy import create_engine, text

    from evalq.store.db import engine_for, upgrade

    if backend == "sqlite":
        url = f"sqlite:///{workdir / f'merge_{size}.db'}"
        upgrade(url)
        return url, lambda: engine_for(url).dispose()
    name = f"evalq_bench_{uuid.uuid4().hex[:10]}"
    admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    url = PG_ADMIN.rsplit("/", 1)[0] + f"/{name}"
    upgrade(url)

    def drop() -> None:
        engine_for(url).dispose()
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    return url, drop


def tier_metrics(url: str, sample: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Real tier-1 and tier-3 metrics of one submission (the model runs once, here)."""
    from evalq.core.profile import profile_named
    from evalq.core.schemas import Submission, Task
    from evalq.store.queries import Job
    from evalq.tasks.tiers import compute_graph, compute_text

    task, sub = Task.model_validate(task_definition()), Submission.model_validate(sample)
    job = Job(submission=sub, task=task, profile=profile_named(task.profile), cost_usd=None)
    text, graph = compute_text(job), compute_graph(job)
    return {"text": text.stored()[0] or {}, "graph": graph.stored()[0] or {}}


def populate(url: str, size: int, fresh: int, metrics: dict[str, dict[str, Any]]) -> list[str]:
    """``size`` evaluated submissions, plus ``fresh`` running ones with their tier rows stored."""
    from sqlalchemy import insert

    from evalq.core.schemas import Submission, Task, run_digests
    from evalq.store import queries
    from evalq.store.db import session_scope
    from evalq.store.models import EvaluationRow, SubmissionRow
    from evalq.tasks.merge import merge_tiers

    rng = random.Random(size)
    sentences = review_sentences()

    def row(sid: str, status: str) -> dict[str, Any]:
        payload = Submission.model_validate(
            # Each run's own text: two runs of other agents rarely write the same review, and
            # a shared output is held for review (copied_output), which is not what this
            # benchmark measures.
            submission(sid, rng, f"{short_review(rng, sentences)} ({sid})")
        ).model_dump(mode="json")
        usage = payload["usage"]
        run_hash, output_hash = run_digests(payload)
        return {
            "id": sid,
            "task_id": TASK_ID,
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
    # The scores every old row stores: what the merge stores for one real run of this task.
    [seed] = store_running(url, [row("seed-000000", "running")], metrics)
    merge_tiers(None, seed)
    with session_scope(url) as session:
        scores = session.get(EvaluationRow, seed).scores
    for start in range(0, size, 5_000):
        rows = [row(f"old-{i:06d}", "done") for i in range(start, min(size, start + 5_000))]
        evaluations = [
            {
                "submission_id": r["id"],
                "task_id": TASK_ID,
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
    new = [row(f"new-{i:06d}", "running") for i in range(fresh)]
    ids = store_running(url, new, metrics)
    if url.startswith("postgresql"):
        # What autovacuum does to a table in steady state: statistics and the visibility map
        # (without it PostgreSQL's index-only scans visit the heap for every row).
        from sqlalchemy import text

        from evalq.store.db import engine_for

        with engine_for(url).connect() as connection:
            connection.execution_options(isolation_level="AUTOCOMMIT")
            connection.execute(text("VACUUM ANALYZE"))
    return ids


def store_running(
    url: str, new: list[dict[str, Any]], metrics: dict[str, dict[str, Any]]
) -> list[str]:
    """Store ``new`` submission rows as running, with their three tier rows, ready to merge."""
    from sqlalchemy import insert

    from evalq.store.db import session_scope
    from evalq.store.models import SubmissionRow, TierResultRow

    tiers = [
        {"submission_id": r["id"], "tier": tier, "status": status, "metrics": data}
        for r in new
        for tier, status, data in (
            ("text", "ok", metrics["text"]),
            ("judge", "skipped", {"reason": "no judge configured"}),
            ("graph", "ok", metrics["graph"]),
        )
    ]
    with session_scope(url) as session:
        session.execute(insert(SubmissionRow), new)
        session.execute(insert(TierResultRow), tiers)
    return [r["id"] for r in new]


def legacy_refresh(task_id: str) -> int:
    """The refresh before this benchmark: every submission row loaded, baseline in Python."""
    from tests.support.stored_runs import arena_run, task_submission_rows

    from evalq.core.profile import profile_named
    from evalq.scoring.arena import compute_baseline
    from evalq.store import queries
    from evalq.store.db import session_scope

    with session_scope() as session:
        queries.release_refresh(session, task_id=task_id)
    with session_scope() as session:
        task = queries.get_task(session, task_id=task_id)
        runs = [
            arena_run(row)
            for row in task_submission_rows(session, task_id=task_id)
            if row.status in ("done", "degraded")
        ]
        data = compute_baseline(runs, profile_named(task.profile).arena).model_dump()
        current = queries.current_baseline(session, task_id=task_id)
        if current is not None and current.data == data:
            return current.version
        return queries.add_baseline(session, task_id=task_id, data=data, submission_count=len(runs))


def time_merges(ids: list[str], refresh: Callable[[str], int], every: int) -> dict[str, float]:
    """Seconds spent merging ``ids`` and in the refreshes they trigger (one per ``every``)."""
    from evalq.tasks.merge import merge_tiers

    merging = refreshing = 0.0
    refreshes: list[float] = []
    for index, sid in enumerate(ids, start=1):
        start = time.perf_counter()
        merge_tiers(None, sid)
        merging += time.perf_counter() - start
        if index % every == 0 or index == len(ids):
            start = time.perf_counter()
            refresh(TASK_ID)
            refreshes.append(time.perf_counter() - start)
    refreshing = sum(refreshes)
    return {
        "merge_s": merging / len(ids),
        "refresh_s": statistics.median(refreshes),
        "per_submission_s": (merging + refreshing) / len(ids),
    }


def measure(backend: str, size: int, merges: int, every: int, workdir: Path) -> dict[str, Any]:
    from evalq.tasks.merge import refresh_baseline
    from evalq.workers.bootstrap import worker_app

    url, drop = new_database(backend, workdir, size)
    try:
        apply_env(evalq_env(database_url=url, baseline_refresh_debounce_s="3600"))
        app = worker_app()  # memory:// broker: the refresh the merge schedules goes nowhere
        app.set_current()
        sample = submission("sample", random.Random(0), "Sparse attention; the baselines are weak.")
        started = time.perf_counter()
        warm = max(1, merges // 4)
        ids = populate(url, size, warm + 2 * merges, tier_metrics(url, sample))
        print(f"# {backend} {size:,} submissions stored in {time.perf_counter() - started:.1f} s")
        # Untimed warm-up: the first merges after a bulk insert read cold pages (x3-4 slower).
        time_merges(ids[:warm], refresh_baseline, every)
        ids = ids[warm:]
        current = time_merges(ids[:merges], refresh_baseline, every)
        legacy = time_merges(ids[merges:], legacy_refresh, every)
        app.close()
        return {"current": current, "legacy": legacy}
    finally:
        drop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[1_000, 100_000])
    parser.add_argument("--merges", type=int, default=200)
    parser.add_argument("--refresh-every", type=int, default=50)
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    args = parse_args(parser, quick={"sizes": [50, 200], "merges": 8, "refresh_every": 4})
    results = {}
    with tempfile.TemporaryDirectory(prefix="evalq-bench-") as workdir:
        for size in args.sizes:
            results[size] = measure(
                args.backend, size, args.merges, args.refresh_every, Path(workdir)
            )
    small, large = args.sizes
    for path in ("legacy", "current"):
        for size in args.sizes:
            for name, value in results[size][path].items():
                figure(f"{args.backend} {path} N={size:,} {name}", value * 1000, "ms")
    cost = {
        path: [results[size][path]["per_submission_s"] for size in args.sizes]
        for path in results[small]
    }
    figure(
        f"legacy refresh: per-submission cost ratio N={large:,}/N={small:,}",
        cost["legacy"][1] / cost["legacy"][0],
    )
    growth = cost["current"][1] / cost["current"][0]
    ratio(f"merge+refresh per-submission cost N={large:,}/N={small:,} (target <= 2)", growth)


if __name__ == "__main__":
    main()
