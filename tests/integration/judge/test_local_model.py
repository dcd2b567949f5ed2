"""The judge against a real local model: llama.cpp (xllamacpp) serving Gemma 3 270M over HTTP.

Only the wiring is asserted: `serve_local_model` starts an OpenAI-compatible server on loopback,
`build_judge` reaches it through ``judge_base_url`` with native JSON-schema output (scores
constrained to their enum by llama.cpp's grammar), and each judgment comes back as a schema-valid
verdict with 1-5 scores normalised by (x-1)/4, or as a recorded validation failure, with its
requests counted. What a 270M model thinks of a review is not asserted.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from evalq.core.profile import load_profile
from evalq.core.schemas import Submission, Task
from evalq.core.settings import Settings
from evalq.judge import JudgeLimits, build_judge
from evalq.judge.local import serve_local_model
from evalq.judge.provider import judge_model_config, open_model

pytestmark = [pytest.mark.integration, pytest.mark.exclusive]  # a local LLM: the cores to itself

REVIEWS = [
    "The paper proposes a sparse attention scheme for long documents. The method is clearly "
    "described, but the baselines are weak and the ablation on window size is missing; adding "
    "both would make the claims convincing."
]


def rss_mib() -> float:
    """Resident memory of this process (the model lives in it)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


# One judgment is ~370 generated tokens: ~15 s on two idle cores, minutes when they are busy.
@pytest.mark.timeout(900)
def test_the_judge_runs_a_rubric_on_a_local_llama_cpp_model() -> None:
    pytest.importorskip("xllamacpp", reason="the local-judge extra is not installed")
    before = rss_mib()
    started = time.monotonic()
    with serve_local_model(context_tokens=4096, threads=1) as server:
        startup_s = time.monotonic() - started
        assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")
        settings = Settings(judge_model="openai:gemma-3-270m", judge_base_url=server.base_url)
        config = judge_model_config(settings)
        assert config is not None
        assert open_model(config).profile["supports_json_schema_output"]  # -> NativeOutput
        limits = JudgeLimits(request_timeout_s=600, max_attempts=2, output_retries=1)
        judge = build_judge(settings, load_profile(), redis=None, limits=limits)
        assert judge is not None
        task = Task(id="t1", category="data_analysis")  # no paper, no trace: constructiveness
        timings, outcomes = [], []
        for i, review in enumerate(REVIEWS):
            submission = Submission(
                id=f"s{i}",
                task_id="t1",
                tool="agent",
                model="gpt-4o",
                usage={"input_tokens": 1, "output_tokens": 1},
                output=review,
            )
            t0 = time.monotonic()
            outcomes.append(judge.evaluate(submission, task, deadline_s=800))
            timings.append(time.monotonic() - t0)
        serving_rss = rss_mib()

    for outcome in outcomes:
        rubric = outcome.rubric("constructiveness")
        assert rubric.transport_retries == 0  # a healthy local server: no transport faults
        assert rubric.attempts == 1 + rubric.validation_retries >= 1
        assert rubric.input_tokens > 0 and rubric.output_tokens > 0  # llama.cpp's own counts
        if rubric.status == "ok":
            assert set(rubric.criteria) == {
                "actionable_feedback",
                "balanced_critique",
                "improvement_guidance",
            }
            for criterion in rubric.criteria.values():
                assert criterion.score in {1, 2, 3, 4, 5}
                assert criterion.normalised == (criterion.score - 1) / 4
            assert rubric.score is not None and 0 <= rubric.score <= 1
            assert outcome.scores["constructiveness"] == rubric.score and not outcome.failed
        else:  # the small model may still answer outside the schema: recorded, never a 0
            assert rubric.status == "failed" and rubric.score is None and outcome.failed
            assert rubric.error is not None and rubric.error.kind == "invalid_output"
            assert rubric.error.attempts == rubric.attempts
    print(
        "local judge:",
        {
            "startup_s": round(startup_s, 1),
            "seconds_per_judgment": [round(t, 1) for t in timings],
            "statuses": [o.rubrics[1].status for o in outcomes],
            "scores": [o.scores["constructiveness"] for o in outcomes],
            "output_tokens": [o.rubrics[1].output_tokens for o in outcomes],
            "rss_mib_before": round(before),
            "rss_mib_serving": round(serving_rss),
        },
    )
