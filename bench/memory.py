"""RSS of a tier-1 worker child (prefork, concurrency 1) after ``--first`` and ``--tasks`` tasks.

    python bench/memory.py [--tasks 10000] [--references 40] [--batch 1000] [--first 100]
                           [--quick]

``evalq worker --queues evalq.text --pool prefork --concurrency 1`` runs on Redis database 13
(flushed before and after) with a throwaway SQLite store. Submissions with short, distinct outputs
are stored directly, spread over ``--references`` tasks with distinct references (so the
reference-embedding cache fills and is reused), and only their tier-1 task is sent, by name. The
child's VmRSS is read after the first ``--first`` tasks have finished and again after every
further batch; the last line is the growth ratio RSS(after --tasks) / RSS(after --first) - 1
(target <= 10%).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

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
    rss_kib,
    short_review,
    worker,
)

DB = 13


def store(url: str, start: int, count: int, references: int, rng: random.Random) -> list[str]:
    """Store ``count`` submissions (ids ``start``...) over the bench tasks; return their ids."""
    from evalq.core.schemas import Submission, Task
    from evalq.store import queries
    from evalq.store.db import session_scope

    sentences = review_sentences()
    ids = []
    with session_scope(url) as session:
        if start == 0:
            for index in range(references):
                reference = " ".join(random.Random(index).sample(sentences, 3))
                task = Task(id=f"mem-{index}", category="data_analysis")
                task = task.model_copy(update={"reference_outputs": [reference]})
                queries.put_task(session, task=task)
        for index in range(start, start + count):
            submission = Submission.model_validate(
                {
                    "id": f"s{index:06d}",
                    "task_id": f"mem-{index % references}",
                    "tool": "aider",
                    "model": "gpt-4o",
                    "usage": {"total_tokens": 1000, "tool_calls": 3, "execution_time": 12.0},
                    "output": f"{short_review(rng, sentences)} (run {index})",
                }
            )
            queries.add_submission(session, submission=submission, cost_usd=None)
            ids.append(submission.id)
    return ids


def finished(url: str) -> int:
    """Tier-1 rows in a final state."""
    from sqlalchemy import func, select

    from evalq.store.db import session_scope
    from evalq.store.models import TierResultRow

    with session_scope(url) as session:
        query = select(func.count()).where(
            TierResultRow.tier == "text", TierResultRow.status != "running"
        )
        return int(session.scalar(query) or 0)


def run_batch(app: object, url: str, ids: list[str], target: int) -> float:
    """Send the tier-1 task of ``ids`` and wait until ``target`` tier-1 rows are final."""
    from evalq.workers.names import TEXT_QUEUE, TIER_TASKS

    start = time.perf_counter()
    for sid in ids:
        app.send_task(TIER_TASKS["text"], args=[sid], queue=TEXT_QUEUE)  # type: ignore[attr-defined]
    while finished(url) < target:
        time.sleep(0.25)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--references", type=int, default=40)
    parser.add_argument("--batch", type=int, default=1_000)
    parser.add_argument("--first", type=int, default=100, help="tasks before the first reading")
    args = parse_args(parser, quick={"tasks": 12, "references": 2, "batch": 4, "first": 4})
    url = redis_url(DB)
    rng = random.Random(13)
    with tempfile.TemporaryDirectory(prefix="evalq-bench-") as tmp:
        db_url = f"sqlite:///{Path(tmp) / 'memory.db'}"
        env = evalq_env(database_url=db_url, broker_url=url, result_backend=url)
        apply_env(env)
        from evalq.store.db import upgrade
        from evalq.workers.app import make_app

        upgrade(db_url)
        app = make_app()
        flush(DB)
        argv = [str(BIN / "evalq"), "worker", "--queues", "evalq.text", "--pool", "prefork"]
        argv += ["--concurrency", "1", "--loglevel", "INFO"]
        with worker(argv, env, Path(tmp) / "worker.log") as started:
            done = 0
            first = store(db_url, 0, args.first, args.references, rng)
            elapsed = run_batch(app, db_url, first, args.first)
            done = args.first
            (child,) = started.children()
            base = rss_kib(child)
            figure("tasks done", done)
            figure(f"child RSS after {done} tasks", base / 1024, "MiB")
            while done < args.tasks:
                count = min(args.batch, args.tasks - done)
                ids = store(db_url, done, count, args.references, rng)
                elapsed = run_batch(app, db_url, ids, done + count)
                done += count
                assert started.children() == [child], "the pool child was replaced"
                figure(
                    f"child RSS after {done} tasks ({count / elapsed:.0f} tasks/s)",
                    rss_kib(child) / 1024,
                    "MiB",
                )
            last = rss_kib(child)
        app.close()
        flush(DB)
    ratio(f"RSS growth {args.first} -> {done} tasks (target <= 0.10)", last / base - 1)


if __name__ == "__main__":
    main()
