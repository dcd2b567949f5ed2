"""The drills' task and cheap submissions: short texts, three-step traces."""

from __future__ import annotations

from typing import Any

from evalq.core.schemas import Task
from evalq.core.settings import Settings
from evalq.service.client import Client
from evalq.workers.app import make_app
from tests.support.reviews import review_task, review_trace

REFERENCE = (
    "The paper proposes a sparse attention scheme for long documents and evaluates it on three "
    "summarisation benchmarks; the baselines are weak and the window-size ablation is missing."
)

TASK = Task.model_validate(review_task("drill-review", reference=REFERENCE))

OUTPUTS = (
    "A sparse attention method for long documents, tested on summarisation; weak baselines.",
    "Long-document summarisation with sparse attention; the window ablation is missing.",
    "The method is clear but the evaluation lacks strong baselines and an ablation.",
)


def submission(sid: str, i: int) -> dict[str, Any]:
    """Submission ``sid``: one of three outputs, usage varying with ``i``, a small trace."""
    return {
        "id": sid,
        "task_id": TASK.id,
        "tool": f"tool-{i % 4}",
        "model": f"model-{i % 3}",
        "usage": {
            "total_tokens": 800 + 37 * (i % 50),
            "tool_calls": 3 + i % 5,
            "execution_time": 10.0 + i % 90,
            "cost_usd": 0.01 + (i % 20) / 1000,
        },
        "output": OUTPUTS[i % len(OUTPUTS)],
        "trace": review_trace(),
    }


def ids(n: int, prefix: str = "s") -> list[str]:
    """``n`` submission ids, zero-padded so they sort."""
    return [f"{prefix}-{i:04d}" for i in range(n)]


def submit_batch(env: dict[str, str], submission_ids: list[str]) -> None:
    """Put the task and submit the batch (stored first, then enqueued) from this process."""
    settings = Settings.model_validate(
        {k.removeprefix("EVALQ_").lower(): v for k, v in env.items() if k.startswith("EVALQ_")}
    )
    client = Client(settings, app=make_app(settings, producer=True))
    client.put_task(TASK)
    try:
        client.submit_many([submission(sid, i) for i, sid in enumerate(submission_ids)])
    finally:
        client.app.close()
