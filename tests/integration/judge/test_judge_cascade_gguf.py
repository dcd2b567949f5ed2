"""A judge cascade whose cheapest level is a real local model, through the real queue.

Level 0 is Gemma 3 270M (GGUF) served by llama.cpp (`serve_local_model`), asked ``k = 2``
times at temperature 0.3 (seeds 0 and 1); the top level is a scripted judge that always answers
4, asked once. Every level is reached on ``judge_base_url`` (a cascade has one base URL), so
that URL is the OpenAI stub acting as a router: requests for model ``gguf`` are forwarded
unchanged to the llama.cpp server and its answer is passed back verbatim (its token counts
included); requests for ``top`` are answered by the script. The router keeps each GGUF answer, so
the test knows what the local model said without predicting it, and asserts that:

- every run records the level that decided, the level-0 confidence is the agreement of the two
  GGUF samples' 1-5 steps as the router saw them, and the calibration's name;
- a run is decided at level 0 exactly when that agreement reaches the threshold (1.0: both
  samples agree), and otherwise goes up to the top level, which decides with its 4;
- the top level was asked exactly for the runs the GGUF level was unsure of.

What a 270M model thinks of a review is not asserted, nor which runs escalate (llama.cpp's
parallel slots make seeded samples vary between runs); at temperature 0.3 both outcomes showed
up in 3 of 4 measured runs (at 0.1 the samples always agreed, at 0.5 and 1.0 never). Skipped when
the local-judge extra is missing (as `test_local_model.py`).
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from evalq.core.schemas import Task
from evalq.judge.calibration import sample_agreement
from evalq.judge.rubrics import ConstructivenessVerdict
from evalq.judge.validation import nearest_step, on_label_scale
from evalq.service.client import Client
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.workers.bootstrap import worker_app
from evalq.workers.embedded import embedded_worker
from tests.support.openai_stub import OpenAIStub, schema_instance
from tests.support.processes import PATIENCE
from tests.support.settings import configure

pytestmark = [pytest.mark.integration, pytest.mark.exclusive]  # a local LLM: the cores to itself

SAMPLES = 2
PROFILE = f"""
[judge]
temperature = 0.3

[judge.cascade]
calibration = "gguf-queue-test"
audit_share = 0.0

[[judge.cascade.levels]]
model = "openai:gguf"
samples = {SAMPLES}
threshold = 1.0

[[judge.cascade.levels]]
model = "openai:top"
samples = 1
threshold = 0.9
"""
TASK = Task(id="cascade-gguf", category="data_analysis", profile="cascade-gguf")
REVIEWS = {
    "g-0": "The method is clearly described, but the baselines are weak and the ablation on "
    "window size is missing; adding both would make the claims convincing.",
    "g-1": "Good paper.",
    "g-2": "The experiments use one dataset only. Please add a second benchmark, report variance "
    "over seeds, and discuss why the sparse pattern fails on short inputs.",
}
TOP_SCORE = 4
RUN_MARK = re.compile(r"\[run:([\w-]+)\]")


class Router(OpenAIStub):
    """The stub, forwarding ``gguf`` requests to llama.cpp and keeping what it answered."""

    def __init__(self, gguf_base_url: str) -> None:
        super().__init__(answer=self.scripted)
        self.gguf_base_url = gguf_base_url
        self.gguf_answers: dict[tuple[str, int], str] = {}  # (run, seed) -> message content
        self.top_asked: list[str] = []
        self.guard = threading.Lock()

    def scripted(self, request: dict[str, Any]) -> Any:
        with self.guard:
            self.top_asked.append(run_of(request))
        schema = request["response_format"]["json_schema"]["schema"]
        return schema_instance(schema, score=TOP_SCORE)

    def completion(
        self, request: dict[str, Any], *, content_override: str | None = None
    ) -> dict[str, Any]:
        if request.get("model") != "gguf" or content_override is not None:
            return super().completion(request, content_override=content_override)
        forwarded = urllib.request.Request(
            self.gguf_base_url + "/chat/completions",
            data=json.dumps(request).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(forwarded, timeout=900 * PATIENCE) as response:
            body: dict[str, Any] = json.loads(response.read())
        with self.guard:
            key = (run_of(request), int(request["seed"]))
            self.gguf_answers[key] = body["choices"][0]["message"]["content"] or ""
        return body


def run_of(request: dict[str, Any]) -> str:
    found = RUN_MARK.search(json.dumps(request["messages"]))
    assert found, "every prompt carries its run's marker"
    return found.group(1)


def step_of(content: str) -> int | None:
    """The 1-5 step of a constructiveness verdict as the judge reads it (equal weights), or
    None when the answer is not a verdict (the judge records that sample as failed)."""
    try:
        verdict = ConstructivenessVerdict.model_validate_json(content)
    except ValidationError:
        return None
    scores = [criterion.score for criterion in verdict.criteria().values()]
    return nearest_step(on_label_scale(sum((s - 1) / 4 for s in scores) / len(scores)))


def level0_confidence(router: Router, sid: str) -> float | None:
    """Agreement of the GGUF samples: the share giving the most common step (a failed sample
    counts as disagreeing), as `evalq.judge.cascade.confidence_of`."""
    steps = [step_of(router.gguf_answers[(sid, seed)]) for seed in range(SAMPLES)]
    scored = [s for s in steps if s is not None]
    if not scored:
        return None  # no sample scored: no confidence, the level escalates
    return sample_agreement(scored)[1] * len(scored) / SAMPLES


def run(sid: str) -> dict[str, object]:
    return {
        "id": sid,
        "task_id": TASK.id,
        "tool": "agent",
        "model": "m",
        "usage": {"input_tokens": 600, "output_tokens": 400, "execution_time": 20.0},
        "output": f"[run:{sid}] {REVIEWS[sid]}",
    }


# 3 runs x 2 GGUF samples (~220-370 generated tokens each): 40 s to 6 min on two shared cores.
@pytest.mark.timeout(1500)
@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)  # the store is not the subject
def test_a_local_gguf_level_decides_or_escalates_through_the_queue(
    db_url: str, redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("xllamacpp", reason="the local-judge extra is not installed")
    from evalq.judge.local import serve_local_model

    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "cascade-gguf.toml").write_text(PROFILE)
    runs = list(REVIEWS)
    # One decoding thread: none waits on another the scheduler parked. Beside two busy processes
    # on 2 vCPUs, this test and test_local_model took 2 min 17 s together; 12 min 50 s on all cores.
    with (
        serve_local_model(context_tokens=4096, parallel=2, threads=1) as server,
        Router(server.base_url) as router,
    ):
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
            judge_model="openai:gguf",
            judge_base_url=router.base_url,
            judge_requests_per_minute="6000",
            judge_request_timeout_s="600",
            judge_max_attempts="1",
            judge_output_retries="0",
            judge_max_output_tokens="512",
        )
        app = worker_app()
        try:
            client = Client(app=app)
            client.put_task(TASK)
            started = time.monotonic()
            with embedded_worker(app, pool="threads", concurrency=2):
                client.submit_many([run(sid) for sid in runs])
                statuses = client.wait(runs, timeout=1200 * PATIENCE)
            elapsed_s = time.monotonic() - started
            with session_scope(db_url) as session:
                rows = {
                    sid: queries.tier_results(session, submission_id=sid)["judge"] for sid in runs
                }
            results = {sid: client.get_result(sid) for sid in runs}
        finally:
            app.close()

    assert set(statuses.values()) == {"done"}
    assert set(router.gguf_answers) == {(sid, seed) for sid in runs for seed in range(SAMPLES)}
    unsure = set()
    for sid in runs:
        record = rows[sid].metrics["cascade"]
        confidence = level0_confidence(router, sid)
        asked = record["asked"]
        assert asked[0]["level"] == 0 and asked[0]["model"].startswith("openai:gguf")
        assert asked[0]["confidence"] == pytest.approx(confidence), sid  # None == approx(None)
        assert record["calibration"] == "gguf-queue-test" and record["levels"] == 2
        assert record["audited"] is False
        # Both GGUF samples agree: the local model decides.
        if confidence is not None and confidence >= 1.0:
            assert record["level"] == 0 and record["levels_asked"] == 1, sid
            assert record["confidence"] == 1.0 and record["threshold"] == 1.0
            assert record["model"].startswith("openai:gguf")
            # The local model's scores stand: their median lies on the step both samples gave.
            [step] = {step_of(router.gguf_answers[(sid, seed)]) for seed in range(SAMPLES)}
            score = results[sid]["scores"]["judge"]["constructiveness"]
            assert nearest_step(on_label_scale(score)) == step, sid
        else:  # unsure: escalated, and the scripted top level decides with its 4
            unsure.add(sid)
            assert record["level"] == 1 and record["levels_asked"] == 2, sid
            assert record["confidence"] == 1.0 and record["threshold"] == 0.9
            assert record["model"].startswith("openai:top")
            assert asked[1]["steps"]["constructiveness"] == TOP_SCORE
            assert results[sid]["scores"]["judge"]["constructiveness"] == (TOP_SCORE - 1) / 4
    assert sorted(router.top_asked) == sorted(unsure)  # the top level saw only the unsure runs
    print(
        "gguf cascade:",
        {
            "runs": len(runs),
            "samples": SAMPLES,
            "escalated": sorted(unsure),
            "seconds": round(elapsed_s, 1),
            "steps": {k: step_of(v) for k, v in sorted(router.gguf_answers.items())},
        },
    )
