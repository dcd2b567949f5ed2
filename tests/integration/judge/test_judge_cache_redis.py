"""Judgments cached in the real Redis: a re-run returns the same verdict and costs nothing."""

from __future__ import annotations

import time

import pytest
import redis

from evalq.core.profile import load_profile, profile_from_dict
from evalq.judge import JudgeLimits
from evalq.judge.cache import JudgmentCache, index_key
from tests.unit.judge.judge_helpers import Scripted, scripted_judge, submission, task

pytestmark = pytest.mark.integration


def limits(prefix: str, ttl: int = 30 * 24 * 3600) -> JudgeLimits:
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
    month = 30 * 24 * 3600
    assert len(keys) == 2 and all(month - 10 <= client.ttl(k) <= month for k in keys)
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


def test_the_default_limits_expire_entries_after_30_days() -> None:
    assert JudgeLimits().cache_ttl_s == 30 * 24 * 3600


def test_an_entry_expires_and_leaves_the_index(judge_redis: tuple[redis.Redis, str]) -> None:
    client, prefix = judge_redis
    # a lifetime of 3 s: the read straight after the write falls inside it on a busy machine too
    cache = JudgmentCache(client, ttl_s=3, max_entries=10, prefix=prefix)
    cache.put(f"{prefix}:cache:r:old", b"{}")
    assert cache.get(f"{prefix}:cache:r:old") == b"{}"
    deadline = time.monotonic() + 10
    while cache.get(f"{prefix}:cache:r:old") is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert cache.get(f"{prefix}:cache:r:old") is None
    time.sleep(3.1)  # the index entry is now older than the lifetime too
    cache.put(f"{prefix}:cache:r:new", b"{}")
    assert client.zrange(index_key(prefix), 0, -1) == [f"{prefix}:cache:r:new".encode()]


def test_inserting_past_the_bound_drops_the_oldest(judge_redis: tuple[redis.Redis, str]) -> None:
    client, prefix = judge_redis
    cache = JudgmentCache(client, ttl_s=3600, max_entries=3, prefix=prefix)
    keys = [f"{prefix}:cache:r:{i}" for i in range(10)]
    for i, key in enumerate(keys):
        cache.put(key, str(i).encode())
        assert cache.size() == min(i + 1, 3)
    assert [cache.get(k) for k in keys] == [None] * 7 + [b"7", b"8", b"9"]
    assert len(list(client.scan_iter(match=f"{prefix}:cache:*"))) == 3
    cache.put(keys[9], b"again")  # an existing key is not rewritten and not counted twice
    assert cache.get(keys[9]) == b"9" and cache.size() == 3


def test_the_judge_keeps_its_bound(judge_redis: tuple[redis.Redis, str]) -> None:
    client, prefix = judge_redis
    bounded = JudgeLimits(key_prefix=prefix, cache_max_entries=2, backoff_base_s=0.001)
    judge = scripted_judge(Scripted(3), redis=client, limits=bounded)
    for text in ("review A", "review B", "review C"):
        judge.evaluate(submission(text), task(None), deadline_s=30)
    assert len(list(client.scan_iter(match=f"{prefix}:cache:*"))) == 2


def test_the_cache_lives_at_its_own_url_when_one_is_set() -> None:
    from evalq.core.settings import Settings
    from evalq.tasks.resources import _build_judge

    broker = "redis://127.0.0.1:6379/3"
    own = Settings(
        judge_model="test", broker_url=broker, judge_cache_url="redis://127.0.0.1:6379/2"
    )
    shared = Settings(judge_model="test", broker_url=broker)
    for settings, db in ((own, 2), (shared, 3)):
        judge = _build_judge(load_profile(), settings)
        assert judge is not None and judge.cache is not None and judge.limiter is not None
        assert judge.cache.client.connection_pool.connection_kwargs["db"] == db
        assert judge.limiter.client.connection_pool.connection_kwargs["db"] == 3
