"""Judgments cached in the real Redis: a re-run returns the same verdict and costs nothing."""

from __future__ import annotations

import pytest
import redis

from evalq.core.profile import load_profile, profile_from_dict
from evalq.judge import JudgeLimits
from tests.unit.judge.judge_helpers import Scripted, scripted_judge, submission, task

pytestmark = pytest.mark.integration


def limits(prefix: str, ttl: int | None = None) -> JudgeLimits:
    return JudgeLimits(key_prefix=prefix, cache_ttl_s=ttl, backoff_base_s=0.001)


def test_rerun_is_a_cache_hit_with_the_same_verdict(judge_redis: tuple[redis.Redis, str]) -> None:
    client, prefix = judge_redis
    body = Scripted(
        {
            "factual_correctness": 5,
            "methodology_understanding": 2,
            "domain_knowledge": 4,
            "actionable_feedback": 3,
            "balanced_critique": 3,
            "improvement_guidance": 1,
        }
    )
    judge = scripted_judge(body, redis=client, limits=limits(prefix))
    first = judge.evaluate(submission(), task(), deadline_s=30)
    assert len(body.calls) == 2 and first.cache_hits == 0
    keys = sorted(client.scan_iter(match=f"{prefix}:cache:*"))
    assert len(keys) == 2 and all(client.ttl(k) == -1 for k in keys)  # no TTL by default
    stored = {k: client.get(k) for k in keys}

    second = judge.evaluate(submission(), task(), deadline_s=30)
    assert len(body.calls) == 2  # no new request
    assert second.cache_hits == 2
    assert second.scores == first.scores
    assert [r.criteria for r in second.rubrics] == [r.criteria for r in first.rubrics]
    assert {k: client.get(k) for k in keys} == stored  # the same bytes, not rewritten
    assert all(r.attempts == 0 and r.input_tokens == 0 for r in second.rubrics)


def test_changed_input_or_sampling_misses(judge_redis: tuple[redis.Redis, str]) -> None:
    client, prefix = judge_redis
    body = Scripted(3)
    judge = scripted_judge(body, redis=client, limits=limits(prefix))
    judge.evaluate(submission("review A"), task(None), deadline_s=30)
    judge.evaluate(submission("review B"), task(None), deadline_s=30)
    assert len(body.calls) == 2
    data = load_profile().model_dump()
    data["judge"]["temperature"] = 0.7
    warm = scripted_judge(
        body, redis=client, limits=limits(prefix), profile=profile_from_dict(data)
    )
    warm.evaluate(submission("review A"), task(None), deadline_s=30)
    assert len(body.calls) == 3
    other_model = scripted_judge(body, redis=client, limits=limits(prefix), model_id="other")
    other_model.evaluate(submission("review A"), task(None), deadline_s=30)
    assert len(body.calls) == 4


def test_ttl_is_configurable(judge_redis: tuple[redis.Redis, str]) -> None:
    client, prefix = judge_redis
    scripted_judge(Scripted(3), redis=client, limits=limits(prefix, ttl=3600)).evaluate(
        submission(), task(None), deadline_s=30
    )
    (key,) = client.scan_iter(match=f"{prefix}:cache:*")
    assert 3590 <= client.ttl(key) <= 3600


def test_failures_are_not_cached(judge_redis: tuple[redis.Redis, str]) -> None:
    client, prefix = judge_redis
    scripted_judge(Scripted("garbage"), redis=client, limits=limits(prefix)).evaluate(
        submission(), task(None), deadline_s=30
    )
    assert list(client.scan_iter(match=f"{prefix}:cache:*")) == []


def test_unreachable_redis_degrades_to_no_cache_and_no_limit() -> None:
    dead = redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2)
    body = Scripted(4)
    outcome = scripted_judge(body, redis=dead, limits=limits("x")).evaluate(
        submission(), task(None), deadline_s=30
    )
    assert outcome.scores["constructiveness"] == 0.75 and not outcome.failed
    assert outcome.redis_error is not None and "ConnectionError" in outcome.redis_error
    dead.close()
