"""Fault drill 3 (issue 6): judge faults on ~30% of calls, through the whole queue.

The real pipeline runs: Redis broker and result backend, the store (SQLite and PostgreSQL), an
in-process worker with a thread pool, `compute_judge` -> `judge_for` -> `build_judge` from
``EVALQ_JUDGE_*``. The judge talks over HTTP to `tests/support/openai_stub.py`.

The fault schedule is drawn up front: for each submission, faults are drawn call by call from
the set proportions (429 with Retry-After, 500, slow past the client timeout, malformed JSON;
30% in all) with a seeded generator, following the judge's retry policy until the submission's
calls end (a valid answer, or retries run out). Each submission's output carries its case marker
and the stub serves that case exactly its schedule, so although the batch runs concurrently, the
outcome of every submission is known in advance:

- degraded evaluations are exactly the submissions whose retries ran out;
- every injected fault is followed by one retry, except the last fault of a submission whose
  retries ran out: recorded transport retries = injected transient faults minus those last
  ones, recorded validation retries = injected malformed answers minus those last ones;
- a degraded evaluation has no judge score at all (never 0): the judge tier is named missing
  with its error as data.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache

import pytest

from evalq.core.schemas import Task
from evalq.core.settings import Settings
from evalq.service.client import Client
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.tasks.tiers import judge_deadline_s
from evalq.workers.app import celery_config
from evalq.workers.bootstrap import worker_app
from evalq.workers.embedded import embedded_worker
from tests.support.openai_stub import Fault, OpenAIStub
from tests.support.processes import PATIENCE
from tests.support.settings import configure

pytestmark = pytest.mark.integration

SUBMISSIONS = 24
MAX_ATTEMPTS = 2  # runs per rubric (EVALQ_JUDGE_MAX_ATTEMPTS)
OUTPUT_RETRIES = 1  # extra requests after an invalid answer (EVALQ_JUDGE_OUTPUT_RETRIES)
SHARES: dict[Fault, float] = {
    "rate_limit": 0.08,
    "server_error": 0.08,
    "slow": 0.07,
    "malformed": 0.07,
}
TRANSIENT: frozenset[str] = frozenset({"rate_limit", "server_error", "slow"})

# No references, no paper, no trace: tier 1 and tier 3 are skipped (not failed) and the judge
# applies one rubric (constructiveness), so the judge alone decides done or degraded.
TASK = Task(id="judge-drill", category="data_analysis")


@dataclass
class Schedule:
    """One submission's calls as the stub will serve them, and what the judge must record."""

    faults: list[Fault] = field(default_factory=list)
    transport_retries: int = 0
    validation_retries: int = 0
    ran_out: bool = False


def draw_schedule(rng: random.Random) -> Schedule:
    """Draw faults call by call and follow the judge's retry policy until the calls end."""
    plan = Schedule()

    def draw() -> Fault:
        x, total = rng.random(), 0.0
        for fault, share in SHARES.items():
            total += share
            if x < total:
                return fault
        return "ok"

    for run in range(1, MAX_ATTEMPTS + 1):
        output_retries = OUTPUT_RETRIES
        while True:
            fault = draw()
            plan.faults.append(fault)
            if fault == "ok":
                return plan
            if fault == "malformed" and output_retries:
                output_retries -= 1
                plan.validation_retries += 1  # the next request of this run answers the error
                continue
            if fault == "malformed":  # output retries ran out
                plan.ran_out = True
                return plan
            break  # transient: this run failed
        if run < MAX_ATTEMPTS:
            plan.transport_retries += 1
    plan.ran_out = True
    return plan


@cache
def draw_batch() -> tuple[int, dict[str, Schedule]]:
    """The first seed whose batch has every fault, 2-5 submissions that run out, 25-35% faulty."""
    for seed in range(1000):
        rng = random.Random(seed)
        batch = {f"j{i:02d}": draw_schedule(rng) for i in range(SUBMISSIONS)}
        calls = [f for s in batch.values() for f in s.faults]
        share = sum(f != "ok" for f in calls) / len(calls)
        every_kind = set(SHARES) <= set(calls)
        if (
            every_kind
            and 2 <= sum(s.ran_out for s in batch.values()) <= 5
            and 0.25 <= share <= 0.35
        ):
            return seed, batch
    raise AssertionError("no seed below 1000 gives the wanted batch")


def submission(sid: str) -> dict[str, object]:
    return {
        "id": sid,
        "task_id": TASK.id,
        "tool": "claude-code",
        "model": "claude-sonnet-4",
        "usage": {"input_tokens": 600, "output_tokens": 400, "execution_time": 20.0},
        "output": f"[case:{sid}] The method is sound, but the baselines are weak; add an ablation "
        "of the window size and report variance over seeds.",
    }


@pytest.fixture
def stub() -> Iterator[OpenAIStub]:
    _, batch = draw_batch()
    with OpenAIStub(plan={sid: s.faults for sid, s in batch.items()}, retry_after_s=0.05) as server:
        yield server


def test_judge_faults_on_30_percent_of_calls_degrade_exactly_the_exhausted(
    db_url: str, redis_url: str, stub: OpenAIStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed, batch = draw_batch()
    configure(
        monkeypatch,
        database_url=db_url,
        broker_url=redis_url,
        result_backend=redis_url,
        tier_retry_backoff_s="0",
        tier_max_retries="1",
        unacked_restore_interval_s="1",
        baseline_refresh_debounce_s="0.2",
        judge_model="openai:stub-judge",
        judge_base_url=stub.base_url,
        judge_max_attempts=str(MAX_ATTEMPTS),
        judge_output_retries=str(OUTPUT_RETRIES),
        # the stub holds a slow answer until the client hangs up; a clean one under load may
        # take seconds (as in test_judge_faults_http)
        judge_request_timeout_s=str(2 * PATIENCE),
        judge_backoff_base_s="0.05",
        judge_backoff_cap_s="0.2",
    )
    app = worker_app()
    try:
        client = Client(app=app)
        client.put_task(TASK)
        started = time.monotonic()
        with embedded_worker(app, pool="threads", concurrency=8):
            client.submit_many([submission(sid) for sid in batch])
            statuses = client.wait(list(batch), timeout=180 * PATIENCE)
        elapsed = time.monotonic() - started
        results = {sid: client.get_result(sid) for sid in batch}
        with session_scope(db_url) as session:
            judge_rows = {
                sid: queries.tier_results(session, submission_id=sid)["judge"] for sid in batch
            }
    finally:
        app.close()

    # Every submission finished, and the degraded ones are exactly those whose retries ran out.
    expected = {sid: "degraded" if s.ran_out else "done" for sid, s in batch.items()}
    assert statuses == expected
    # The stub served each case exactly its schedule: no extra request, none missing.
    served: dict[str, list[str]] = {}
    for case, fault in stub.log:
        served.setdefault(str(case), []).append(fault)
    assert served == {sid: list(s.faults) for sid, s in batch.items()}

    # The judge's own retries are the only ones: one delivery of each judge tier task.
    assert {row.deliveries for row in judge_rows.values()} == {1}
    for sid, s in batch.items():
        metrics = judge_rows[sid].metrics
        assert metrics is not None
        rubrics = {r["rubric"]: r for r in metrics["rubrics"]}
        rubric = rubrics["constructiveness"]
        got = (rubric["attempts"], rubric["transport_retries"], rubric["validation_retries"])
        assert got == (len(s.faults), s.transport_retries, s.validation_retries), sid

    injected = Counter(f for s in batch.values() for f in s.faults)
    transient = sum(injected[f] for f in TRANSIENT)
    last_transient = sum(s.ran_out and s.faults[-1] in TRANSIENT for s in batch.values())
    last_malformed = sum(s.ran_out and s.faults[-1] == "malformed" for s in batch.values())
    transport = sum(r.metrics["transport_retries"] for r in judge_rows.values())
    validation = sum(r.metrics["validation_retries"] for r in judge_rows.values())
    assert transport == transient - last_transient
    assert validation == injected["malformed"] - last_malformed

    for sid, result in results.items():
        judge_scores = result["scores"]["judge"]
        if batch[sid].ran_out:
            assert set(judge_scores.values()) == {None}  # missing, never 0
            missing = result["missing_tiers"]["judge"]
            assert missing["status"] == "failed"
            error = missing["error"]
            assert error["rubric"] == "constructiveness"
            assert error["kind"] == (
                "invalid_output" if last_is(batch[sid], "malformed") else "transient"
            )
            assert error["attempts"] == len(batch[sid].faults)
        else:
            assert judge_scores["constructiveness"] == 0.75  # the stub answers 4 -> (4-1)/4
            assert "judge" not in result["missing_tiers"]

    calls = sum(injected.values())
    report = {
        "seed": seed,
        "submissions": len(batch),
        "done": sum(v == "done" for v in statuses.values()),
        "degraded": sum(v == "degraded" for v in statuses.values()),
        "calls": calls,
        "faulty_calls": calls - injected["ok"],
        "fault_share": round((calls - injected["ok"]) / calls, 3),
        "faults": {f: injected[f] for f in (*SHARES, "ok")},
        "transport_retries": transport,
        "validation_retries": validation,
        "wall_s": round(elapsed, 1),
    }
    print("judge fault drill:", report)


def last_is(schedule: Schedule, fault: str) -> bool:
    return bool(schedule.faults) and schedule.faults[-1] == fault


@pytest.mark.parametrize("time_limit", [10, 60, 150, 900, 3000])
def test_the_judge_deadline_fits_inside_the_soft_limit_and_the_visibility_timeout(
    time_limit: int,
) -> None:
    settings = Settings(
        broker_url="redis://127.0.0.1:6379/9",
        task_time_limit_s=time_limit,
        visibility_timeout_s=time_limit + 400,
    )
    config = celery_config(settings)
    deadline = judge_deadline_s(settings)
    assert 0 < deadline < config["task_soft_time_limit"] <= config["task_time_limit"]
    assert config["task_time_limit"] < config["broker_transport_options"]["visibility_timeout"]
