"""How many judgments one judge worker runs at once: 100 judgments of 1 s each.

    python bench/judge_concurrency.py [--judgments 100] [--concurrency 100] [--quick]

The OpenAI stub (`tests/support/openai_stub.py`) answers every request with a valid verdict
after exactly 1 s (its ``slow`` fault with ``slow_s=1``). ONE real worker subprocess,
``evalq worker --queues evalq.judge --pool threads``, runs the judge tier; a second worker takes
the other queues (tier 3 is skipped here; tier 1, without references, only reads each output for
instructions to the judge; the merge is quick). Store: a throwaway SQLite
file; broker and result backend: Redis database 12 (flushed before and after).

Each submission carries no references, no paper and no trace, so the judge applies exactly one
rubric (constructiveness): one submission = one judgment = one model call. Outputs differ, so
the judgment cache never answers. The judge's shared rate limit would hold 100 calls to 60 in the
first minute (``EVALQ_JUDGE_REQUESTS_PER_MINUTE`` defaults to 60, then one per second), so the
benchmark raises it to 6000 explicitly.

Prints the wall time from the first submission to the last stored judge tier result, the
throughput, and last the ratio serial time (judgments x 1 s) / measured.
"""

from __future__ import annotations

import argparse
import collections
import gc
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from _common import (  # noqa: E402
    BIN,
    Worker,
    apply_env,
    evalq_env,
    figure,
    flush,
    parse_args,
    ratio,
    redis_url,
)
from tests.support.openai_stub import OpenAIStub  # noqa: E402

DB = 12
REDIS_DB_URL = redis_url(DB)
CALL_S = 1.0
FINAL = ("ok", "failed", "skipped")


def submission(i: int) -> dict[str, object]:
    """A review-only submission (no trace): the judge's constructiveness rubric alone applies."""
    return {
        "id": f"jb{i:04d}" if i >= 0 else "jb-warm-up",
        "task_id": "judge-bench",
        "tool": "claude-code",
        "model": "claude-sonnet-4",
        "usage": {"input_tokens": 900, "output_tokens": 300, "execution_time": 12.0},
        "output": f"Review {i}: the method is sound, but the baselines are weak; add an ablation "
        "of the window size and report the variance over seeds.",
    }


def judge_rows_final(url: str) -> int:
    """Judge tier results in a final state."""
    from sqlalchemy import func, select

    from evalq.store.db import session_scope
    from evalq.store.models import TierResultRow

    with session_scope(url) as session:
        query = (
            select(func.count())
            .select_from(TierResultRow)
            .where(TierResultRow.tier == "judge", TierResultRow.status.in_(FINAL))
        )
        return int(session.scalar(query) or 0)


def main() -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judgments", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=100, help="judge worker threads")
    args = parse_args(parser, quick={"judgments": 10, "concurrency": 10})

    from evalq.core.schemas import Task
    from evalq.service.client import Client
    from evalq.store.db import session_scope, upgrade
    from evalq.store.queries import tier_results
    from evalq.workers.names import JUDGE_QUEUE, QUEUES

    flush(DB)
    with (
        tempfile.TemporaryDirectory(prefix="evalq-judge-bench-") as tmp,
        OpenAIStub(proportions={"slow": 1.0}, slow_s=CALL_S) as stub,
    ):
        db_url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        upgrade(db_url)
        env = evalq_env(
            database_url=db_url,
            broker_url=REDIS_DB_URL,
            result_backend=REDIS_DB_URL,
            judge_model="openai:stub-judge",
            judge_base_url=stub.base_url,
            judge_requests_per_minute="6000",  # the default 60 would hold 40 of the 100 calls
            judge_tokens_per_minute="10000000",
        )
        apply_env(env)
        client = Client()
        client.put_task(Task(id="judge-bench", category="data_analysis"))
        others = ",".join(q for q in QUEUES if q != JUDGE_QUEUE)
        evalq = str(BIN / "evalq")
        judge_argv = [evalq, "worker", "--queues", JUDGE_QUEUE, "--pool", "threads"]
        judge_argv += ["--concurrency", str(args.concurrency), "--loglevel", "INFO"]
        other_argv = [evalq, "worker", "--queues", others, "--pool", "threads"]
        other_argv += ["--concurrency", "8", "--loglevel", "INFO"]
        judge_worker = Worker(judge_argv, env, Path(tmp) / "judge-worker.log")
        other_worker = Worker(other_argv, env, Path(tmp) / "other-worker.log")
        try:
            judge_worker.wait_ready()
            other_worker.wait_ready()
            # Warm-up, not timed: the worker's first judgment imports the model stack (pydantic-ai,
            # the OpenAI SDK) and builds the judge; a long-running worker pays that once.
            client.submit(submission(-1))
            client.wait([str(submission(-1)["id"])], timeout=300)
            ids = [str(submission(i)["id"]) for i in range(args.judgments)]
            started = time.monotonic()
            client.submit_many([submission(i) for i in range(args.judgments)])
            submitted_s = time.monotonic() - started
            first_s = None
            while (done := judge_rows_final(db_url) - 1) < args.judgments:  # minus the warm-up
                if first_s is None and done > 0:
                    first_s = time.monotonic() - started
                if time.monotonic() - started > 600:
                    raise RuntimeError("the judge tier did not finish within 600 s")
                time.sleep(0.05)
            judged_s = time.monotonic() - started
            statuses = client.wait(ids, timeout=600, poll=0.05)
            finished_s = time.monotonic() - started
        finally:
            judge_worker.stop()
            other_worker.stop()
        with session_scope(db_url) as session:
            rows = [tier_results(session, submission_id=i)["judge"] for i in ids]
        calls = sum(int(r.metrics["attempts"]) for r in rows if r.metrics)
        ok = sum(r.status == "ok" for r in rows)
        gc.collect()  # drop the chords' AsyncResults while the backend can still unsubscribe
        client.app.close()
    flush(DB)

    print(f"judge worker: threads pool, concurrency {args.concurrency}; stub answers in {CALL_S} s")
    print(f"submission statuses: {dict(collections.Counter(statuses.values()))}")
    figure("judgments (model calls counted by the judge)", calls)
    figure("model calls the stub served (warm-up excluded)", stub.requests - 1)
    figure("judge tier results ok", ok)
    figure("wall time to store and enqueue the submissions", submitted_s, "s")
    figure("wall time, submit -> first judge result", first_s or judged_s, "s")
    figure("wall time, submit -> last judge result", judged_s, "s")
    figure("wall time, submit -> last evaluation", finished_s, "s")
    figure("throughput", args.judgments / judged_s, "judgments/s")
    ratio("serial time (judgments x 1 s) / measured", args.judgments * CALL_S / judged_s)


if __name__ == "__main__":
    main()
