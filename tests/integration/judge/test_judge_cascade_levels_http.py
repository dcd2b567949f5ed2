"""Cascade levels over real HTTP, each on its own OpenAI-compatible server (the stub) with its own
key: a level whose confidence is the verdict's probability from token logprobs, a level the
calibration never trusted left off the route, and a key name the settings lack refused.

Only the constructiveness rubric applies (no paper, no trace): three criteria, so a verdict's
probability is the product of three score tokens' probabilities.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from evalq.core.errors import InvalidInput
from evalq.core.profile import profile_from_dict
from evalq.core.schemas import Submission, Task
from evalq.core.settings import Settings
from evalq.judge import JudgeCascade, build_judge
from tests.support.openai_stub import OpenAIStub

pytestmark = pytest.mark.integration

TASK = Task(id="t1", category="data_analysis")
RUN = Submission(
    id="s1",
    task_id="t1",
    tool="agent",
    model="gpt-4o",
    usage={"input_tokens": 1, "output_tokens": 1},
    output="The method is sound; add an ablation of the window size.",
)
KEYS = {"cheap": "key-of-the-cheap-level", "middle": "key-of-the-middle", "top": "key-of-the-top"}


@pytest.fixture
def servers() -> Iterator[dict[str, OpenAIStub]]:
    with ExitStack() as stack:
        yield {
            "cheap": stack.enter_context(OpenAIStub(score=5, score_logprob=math.log(0.9))),
            "middle": stack.enter_context(OpenAIStub(score=3)),
            "top": stack.enter_context(OpenAIStub(score=4)),
        }


def cascade(servers: dict[str, OpenAIStub], levels: list[dict[str, Any]]) -> JudgeCascade:
    """A cascade of the named levels, each on its own stub with its own key."""
    section = {
        "calibration": "http-test",
        "audit_share": 0.0,
        "levels": [
            {
                "model": f"openai:{level['name']}",
                "base_url": servers[level["name"]].base_url,
                "key": level["name"],
                **{k: v for k, v in level.items() if k != "name"},
            }
            for level in levels
        ],
    }
    profile = profile_from_dict({"judge": {"cascade": section}})
    settings = Settings(judge_model="openai:unused", judge_keys=KEYS)  # type: ignore[arg-type]
    judge = build_judge(settings, profile, redis=None)
    assert isinstance(judge, JudgeCascade)
    return judge


def test_a_logprob_confidence_decides_on_the_levels_own_server(
    servers: dict[str, OpenAIStub],
) -> None:
    judge = cascade(
        servers,
        [
            {"name": "cheap", "samples": 1, "threshold": 0.7, "confidence": "logprobs"},
            {"name": "top", "samples": 1, "threshold": 0.5},
        ],
    )
    result = judge.evaluate(RUN, TASK, deadline_s=60)
    record = result.cascade
    assert record is not None and not result.failed
    [asked] = record.asked
    assert asked.confidence_kind == "logprobs"
    assert asked.confidence == pytest.approx(0.9**3)  # three score tokens at p = 0.9
    assert record.level == 0 and record.confidence == pytest.approx(0.729)
    assert result.scores["constructiveness"] == 1.0  # the cheap level's 5s stand
    [(authorization, body)] = servers["cheap"].requests_seen
    assert authorization == f"Bearer {KEYS['cheap']}" and body["logprobs"] is True
    assert body["model"] == "cheap"
    assert servers["top"].requests == 0


def test_a_doubtful_logprob_level_escalates_to_the_top_on_its_server(
    servers: dict[str, OpenAIStub],
) -> None:
    servers["cheap"].score_logprob = math.log(0.5)  # 0.125 for the verdict: below 0.7
    judge = cascade(
        servers,
        [
            {"name": "cheap", "samples": 1, "threshold": 0.7, "confidence": "logprobs"},
            {"name": "top", "samples": 2, "threshold": 0.9},
        ],
    )
    result = judge.evaluate(RUN, TASK, deadline_s=60)
    record = result.cascade
    assert record is not None
    assert [a.confidence for a in record.asked] == [pytest.approx(0.125), 1.0]
    assert [a.confidence_kind for a in record.asked] == ["logprobs", "samples"]
    assert record.level == 1 and result.scores["constructiveness"] == 0.75  # the top's 4s
    assert {auth for auth, _ in servers["top"].requests_seen} == {f"Bearer {KEYS['top']}"}
    assert all("logprobs" not in body for _, body in servers["top"].requests_seen)


def test_a_level_calibration_never_trusted_is_left_off_the_route(
    servers: dict[str, OpenAIStub],
) -> None:
    servers["cheap"].score_logprob = math.log(0.5)
    judge = cascade(
        servers,
        [
            {"name": "cheap", "samples": 1, "threshold": 0.7, "confidence": "logprobs"},
            {"name": "middle", "samples": 3},  # no threshold: it would only cost
            {"name": "top", "samples": 1, "threshold": 0.9},
        ],
    )
    result = judge.evaluate(RUN, TASK, deadline_s=60)
    record = result.cascade
    assert record is not None
    assert record.skipped == (1,) and [a.level for a in record.asked] == [0, 2]
    assert servers["middle"].requests == 0 and servers["top"].requests == 1
    assert record.level == 2 and record.levels_asked == 2


def test_a_logprob_level_without_logprobs_falls_back_on_its_samples(
    servers: dict[str, OpenAIStub],
) -> None:
    # A server that ignores the request for logprobs: the agreement of the samples stands in.
    servers["cheap"].token_logprobs = lambda request, content: None  # type: ignore[method-assign]
    judge = cascade(
        servers,
        [
            {"name": "cheap", "samples": 2, "threshold": 0.9, "confidence": "logprobs"},
            {"name": "top", "samples": 1, "threshold": 0.5},
        ],
    )
    record = judge.evaluate(RUN, TASK, deadline_s=60).cascade
    assert record is not None
    assert (record.asked[0].confidence, record.asked[0].confidence_kind) == (1.0, "samples")
    assert record.level == 0 and servers["top"].requests == 0


def test_a_key_name_the_settings_lack_is_refused(servers: dict[str, OpenAIStub]) -> None:
    profile = profile_from_dict(
        {
            "judge": {
                "cascade": {
                    "calibration": "x",
                    "levels": [{"model": "openai:cheap", "key": "nowhere", "threshold": 0.5}],
                }
            }
        }
    )
    settings = Settings(judge_model="openai:unused", judge_keys=KEYS)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput) as caught:
        build_judge(settings, profile, redis=None)
    [(field, rule)] = caught.value.problems
    assert field == "profile.judge.cascade.levels.key" and "nowhere" not in KEYS
    assert "cheap" in rule and KEYS["cheap"] not in rule
