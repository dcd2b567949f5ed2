"""What a worker process loads once and reuses: profiles, the BERTScore model, the judge."""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import TYPE_CHECKING

from evalq.profiles import profile_named
from evalq.scoring.profile import Profile
from evalq.settings import get_settings

if TYPE_CHECKING:
    from evalq.judge import Judge
    from evalq.metrics.semantic import SemanticScorer

_lock = threading.Lock()


@lru_cache(maxsize=4)
def _scorer(model_path: str, max_chunk_tokens: int) -> SemanticScorer:
    from evalq.metrics.semantic import SemanticScorer, default_model_path

    return SemanticScorer(model_path or default_model_path(), max_chunk_tokens=max_chunk_tokens)


def semantic_scorer(profile: Profile) -> SemanticScorer:
    """The process's BERTScore scorer for the profile's model, loaded on first use."""
    with _lock:  # threads of one worker share one model
        return _scorer(profile.text.model_path, profile.text.max_chunk_tokens)


@lru_cache(maxsize=4)
def _judge(profile_name: str, settings_key: str) -> Judge | None:
    from evalq.judge import build_judge

    redis_client = None
    settings = get_settings()
    if settings.broker_url and settings.broker_url.startswith("redis"):
        import redis

        redis_client = redis.Redis.from_url(settings.broker_url)
    return build_judge(settings, profile_named(profile_name), redis=redis_client)


def judge_for(profile_name: str) -> Judge | None:
    """The process's judge for a profile, or None when no judge model is configured."""
    settings = get_settings()
    if settings.judge_model is None:
        return None
    with _lock:  # keyed by the settings too, so new settings (tests, reloads) get a new judge
        return _judge(profile_name, settings.model_dump_json())
