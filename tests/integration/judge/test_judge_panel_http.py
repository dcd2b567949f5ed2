"""A judge panel over real HTTP: three models on one OpenAI-compatible server (the stub).

The stub answers each model with its own score: judge-a and judge-b give 4 to every criterion,
judge-c gives 2 (or, where it is meant to fail, an answer that never validates). Only the
constructiveness rubric applies (no paper, no trace): three units per member.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from evalq.core.profile import Profile, load_profile, profile_from_dict
from evalq.core.results import TierOutcome
from evalq.core.schemas import Submission, Task
from evalq.core.settings import Settings, get_settings
from evalq.judge import JudgeLimits, JudgePanel, build_judge
from evalq.store.queries import Job
from evalq.tasks.tiers import compute_judge
from tests.support.openai_stub import OpenAIStub, schema_instance
from tests.support.settings import configure

pytestmark = pytest.mark.integration

TASK = Task(id="t1", category="data_analysis")
SUBMISSION = Submission(
    id="s1",
    task_id="t1",
    tool="agent",
    model="gpt-4o",
    usage={"input_tokens": 1, "output_tokens": 1},
    output="The method is sound; add an ablation of the window size.",
)


class ByModel:
    """A stub answer: each served model's score; None answers with JSON that never validates."""

    def __init__(self, scores: dict[str, int | None]) -> None:
        self.scores = scores
        self.asked: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        model = request["model"]
        with self._lock:
            self.asked[model] += 1
        score = self.scores[model]
        if score is None:
            return {"not": "a verdict"}
        schema = request["response_format"]["json_schema"]["schema"]
        answer: dict[str, Any] = schema_instance(schema, score=score)
        return answer


def panel_profile(*models: str) -> Profile:
    data = load_profile().model_dump()
    data["judge"]["panel"] = list(models)
    return profile_from_dict(data)


def test_every_model_is_asked_over_http_and_cached_under_its_own_key(
    judge_redis: tuple[redis.Redis, str],
) -> None:
    client, prefix = judge_redis
    answer = ByModel({"judge-a": 4, "judge-b": 4, "judge-c": 2})
    with OpenAIStub(answer=answer) as stub:
        settings = Settings(judge_model="openai:judge-a", judge_base_url=stub.base_url)
        profile = panel_profile("openai:judge-b", "openai:judge-c", "openai:judge-a")
        judge = build_judge(settings, profile, redis=client, limits=JudgeLimits(key_prefix=prefix))
        assert isinstance(judge, JudgePanel)
        first = judge.evaluate(SUBMISSION, TASK, deadline_s=30)
        second = judge.evaluate(SUBMISSION, TASK, deadline_s=30)
    assert answer.asked == {"judge-a": 1, "judge-b": 1, "judge-c": 1}  # the rerun: all cached
    assert [m.model for m in first.panel] == [
        f"openai:judge-{name}@{stub.base_url}" for name in "abc"
    ]
    assert first.scores["constructiveness"] == pytest.approx(0.75)  # median of .75, .75, .25
    assert first.agreement is not None and first.agreement.alpha == pytest.approx(-1 / 3)
    # units (4, 4, 2) three times: o44 = o42 = o24 = 3, n4 = 6, n2 = 3, d24 = 4.5^2;
    # D_o = 2*3*20.25/9 = 13.5, D_e = 2*6*3*20.25/72 = 10.125, alpha = 1 - 13.5/10.125
    assert len(list(client.scan_iter(match=f"{prefix}:cache:*"))) == 3  # one per model
    assert second.cache_hits == 1 and second.rubric("constructiveness").cache_hit
    assert second.scores == first.scores and second.agreement == first.agreement


@pytest.fixture
def fresh_settings() -> Iterator[None]:
    yield
    get_settings.cache_clear()  # later tests read their own EVALQ_* again, not the stub's URL


def test_compute_judge_with_a_panel_profile_stores_the_panel_and_its_agreement(
    monkeypatch: pytest.MonkeyPatch, fresh_settings: None
) -> None:
    answer = ByModel({"judge-a": 4, "judge-b": 5, "judge-c": None})
    with OpenAIStub(answer=answer) as stub:
        configure(
            monkeypatch,
            judge_model="openai:judge-a",
            judge_base_url=stub.base_url,
            broker_url="memory://",  # no Redis: no shared cache or rate limit
            judge_output_retries="1",
        )
        profile = panel_profile("openai:judge-b", "openai:judge-c")
        outcome = compute_judge(Job(SUBMISSION, TASK, profile, None))
    assert answer.asked["judge-c"] == 2  # the first answer and one output retry
    assert outcome.status == "ok" and outcome.judge is not None  # one failed member is no failure
    metrics, error = outcome.stored()
    assert error is None and metrics is not None
    assert metrics["scores"]["constructiveness"] == pytest.approx(0.875)  # median of 0.75 and 1
    assert metrics["agreement"] == {"alpha": pytest.approx(-2 / 3), "units": 3, "members": 2}
    judge_c = metrics["panel"][2]["rubrics"][1]
    assert judge_c["status"] == "failed" and judge_c["error"]["kind"] == "invalid_output"
    assert TierOutcome.from_stored("judge", "ok", metrics, None) == outcome
