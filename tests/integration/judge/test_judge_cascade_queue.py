"""A judge cascade through the real queue: Redis broker and result backend, the store (SQLite and
PostgreSQL), an in-process thread-pool worker, `compute_judge` -> `judge_for` -> `build_judge`
from the profile's ``[judge.cascade]``, over HTTP to `tests/support/openai_stub.py`, whose answers
are scripted by model and seed so each run's confidences are known in advance:

- an "easy" run: the cheap level's three samples all answer 5 (confidence 1): it decides;
- a "hard" run: the cheap samples answer 5, 3, 1 (confidence 1/3): it goes up, and the top
  level's two samples answer 4 (confidence 1): the top decides;
- a "doubt" run: the cheap level as for a hard one, the top's samples answer 4 and 2
  (confidence 1/2): no level is confident, "judge uncertain", the top's median kept;
- an audited run (the seeded audit share) is judged by the top level whatever the cheap said.
Those uncertain and audited runs are the label queue; the runs every level judged are the next
calibration's items.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from evalq.core.errors import InvalidInput
from evalq.core.schemas import Task
from evalq.judge.cascade import is_audited
from evalq.read.judge_agreement import calibration_items
from evalq.service.client import Client
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.workers.bootstrap import worker_app
from evalq.workers.embedded import embedded_worker
from tests.support.openai_stub import OpenAIStub, schema_instance
from tests.support.processes import PATIENCE
from tests.support.settings import configure

pytestmark = pytest.mark.integration

PROFILE = """
[judge.cascade]
calibration = "queue-test-calibration"
audit_share = 0.3
audit_seed = 11

[[judge.cascade.levels]]
model = "openai:cheap"
samples = 3
threshold = 0.9

[[judge.cascade.levels]]
model = "openai:top"
samples = 2
threshold = 0.9
"""
TASK = Task(id="cascade-queue", category="data_analysis", profile="cascade")
RUNS = [f"easy-{i}" for i in range(5)] + [f"hard-{i}" for i in range(5)] + ["doubt-0", "doubt-1"]
HARD_SCORES = (5, 3, 1)


ASKED: Counter[str] = Counter()
LOCK = threading.Lock()


def answer(request: dict[str, Any]) -> Any:
    """The verdict of the model and seed asked, for the run named in the prompt (counted)."""
    with LOCK:
        ASKED[request["model"]] += 1
    prompt = json.dumps(request["messages"])
    unsure = "[hard]" in prompt or "[doubt]" in prompt
    if request["model"] == "cheap":
        score = HARD_SCORES[request["seed"]] if unsure else 5
    else:
        score = (4, 2)[request["seed"]] if "[doubt]" in prompt else 4
    return schema_instance(request["response_format"]["json_schema"]["schema"], score=score)


def run(sid: str) -> dict[str, object]:
    kind = sid.split("-")[0]
    return {
        "id": sid,
        "task_id": TASK.id,
        "tool": "agent",
        "model": "m",
        "usage": {"input_tokens": 600, "output_tokens": 400, "execution_time": 20.0},
        "output": f"[{kind}] review {sid}: the method is sound, but add an ablation.",
    }


def test_the_cascade_decides_escalates_and_audits_through_the_queue(
    db_url: str, redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "cascade.toml").write_text(PROFILE)
    ASKED.clear()
    audited = {sid for sid in RUNS if is_audited(sid, 0.3, 11)}
    assert audited and audited != set(RUNS)  # the seed gives a mix
    with OpenAIStub(answer=answer) as stub:
        configure(
            monkeypatch,
            database_url=db_url,
            broker_url=redis_url,
            result_backend=redis_url,
            tier_retry_backoff_s="0",
            tier_max_retries="1",
            unacked_restore_interval_s="1",
            baseline_refresh_debounce_s="0.2",
            profile_dir=str(profiles),
            judge_model="openai:cheap",
            judge_base_url=stub.base_url,
            judge_requests_per_minute="6000",
        )
        app = worker_app()
        try:
            client = Client(app=app)
            client.put_task(TASK)
            with embedded_worker(app, pool="threads", concurrency=4):
                client.submit_many([run(sid) for sid in RUNS])
                statuses = client.wait(RUNS, timeout=180 * PATIENCE)
            with session_scope(db_url) as session:
                rows = {
                    sid: queries.tier_results(session, submission_id=sid)["judge"] for sid in RUNS
                }
            results = {sid: client.get_result(sid) for sid in RUNS}
            waiting = client.label_queue(TASK.id).candidates
            client.add_labels(
                [
                    {"submission_id": sid, "labeller": "ann", "scores": {"constructiveness": 4}}
                    for sid in RUNS
                ]
            )
            with session_scope(db_url) as session:
                by_people = calibration_items(session, tasks=TASK.id, reference="human")
                by_top = calibration_items(session, tasks=TASK.id, reference="top judge")
            with pytest.raises(InvalidInput) as refused:
                client.calibrate_cascade(TASK.id, alpha=0.1, delta=0.1)
            plan = client.cascade_search_plan(TASK.id, alpha=0.1, delta=0.1)
            after = client.label_queue(TASK.id)
            every = client.label_queue(TASK.id, unlabelled_only=False).candidates
        finally:
            app.close()
    assert set(statuses.values()) == {"done"}
    assert {row.deliveries for row in rows.values()} == {1}  # one judge task each
    for sid in RUNS:
        record = rows[sid].metrics["cascade"]
        kind, audit = sid.split("-")[0], sid in audited
        up = kind != "easy" or audit  # the top level was asked
        assert record["level"] == {"easy": 0, "hard": 1, "doubt": None}[kind], sid
        assert record["levels_asked"] == (2 if up else 1), sid
        assert record["audited"] == audit, sid
        assert record["model"].startswith("openai:top" if up else "openai:cheap")
        assert record["confidence"] == (0.5 if kind == "doubt" else 1.0), sid
        assert record["threshold"] == (None if kind == "doubt" else 0.9)
        assert record["calibration"] == "queue-test-calibration" and record["levels"] == 2
        assert [level["level"] for level in record["asked"]] == list(range(record["levels_asked"]))
        expected = 0.5 if kind == "doubt" else 0.75 if up else 1.0  # the standing median
        assert results[sid]["scores"]["judge"]["constructiveness"] == expected, sid
    # The queue for people: the uncertain runs first, then the audited ones; none once labelled.
    uncertain = [("doubt-0", "judge uncertain"), ("doubt-1", "judge uncertain")]
    audits = [(sid, "audit") for sid in sorted(audited) if not sid.startswith("doubt")]
    assert [(c.submission_id, c.reason) for c in waiting] == uncertain + audits
    assert after.candidates == [] and {tuple(c.labellers) for c in every} == {("ann",)}
    top_runs = sum(not sid.startswith("easy") or sid in audited for sid in RUNS)
    # The audited runs (drawn like live traffic) are the calibration items, not every run that
    # reached the top (the escalated ones are the hard ones): the cheap level said 5 where the
    # person and the top level said 4 (hard runs: samples 5, 3, 1, confidence 1/3).
    reached_top = sorted(audited)
    assert 0 < len(reached_top) < sum(not sid.startswith("easy") or sid in audited for sid in RUNS)
    expected_items = [
        [
            (1.0 if sid.startswith("easy") else 1 / 3, False),
            (0.5 if sid.startswith("doubt") else 1.0, True),  # doubt: 4 and 2, the first seen
        ]
        for sid in reached_top
    ]
    assert len(by_people) == len(reached_top)
    for got, want in zip(by_people, expected_items, strict=True):
        assert [a for _, a in got] == [a for _, a in want]
        assert [c for c, _ in got] == pytest.approx([c for c, _ in want])
    assert [[a for _, a in item] for item in by_top] == [[False, True]] * len(reached_top)
    # The plan reads the same audited runs' confidences, no label: too few to start a search.
    assert [(level.items, level.start, level.may_decide) for level in plan] == [
        (len(reached_top), None, 0)
    ] * 2
    [(field, rule)] = refused.value.problems
    assert field == "labels" and rule.startswith(f"{len(reached_top)} labelled items")
    assert "needs at least 29" in rule  # alpha = delta = 0.1 over two levels
    assert {"cheap": 3 * len(RUNS), "top": 2 * top_runs} == ASKED
