"""Tier 2 of spec 001: the LLM judge (technical accuracy, constructiveness, planning rationality).

Use `build_judge` to get a `Judge` for the configured model (or None when no judge model is set;
a `JudgePanel` when the profile names a panel), then `.evaluate(submission, task, deadline_s=...)`,
which always returns a `evalq.core.results.JudgeResult`.
"""

from __future__ import annotations

from functools import partial

import redis

from evalq.core.profile import Profile
from evalq.core.redact import redactor_for
from evalq.core.settings import Settings
from evalq.judge.config import JudgeLimits, limits_from_settings
from evalq.judge.judge import Judge
from evalq.judge.panel import JudgePanel
from evalq.judge.provider import JudgeModelConfig, open_model, panel_configs

__all__ = [
    "Judge",
    "JudgeLimits",
    "JudgeModelConfig",
    "JudgePanel",
    "build_judge",
]


def build_judge(
    settings: Settings,
    profile: Profile,
    *,
    redis: redis.Redis | None,
    cache_redis: redis.Redis | None = None,
    limits: JudgeLimits | None = None,
) -> Judge | JudgePanel | None:
    """The judge for ``settings.judge_model`` (and ``judge_base_url``), or None if none is set.

    With models in ``profile.judge.panel`` it is a `JudgePanel` of the judge model and those
    (`evalq.judge.provider.panel_configs` says how each is reached).

    Args:
        settings: ``judge_model``, ``judge_base_url``, ``judge_api_key`` and, where Settings has
            them, ``judge_<limit>`` overrides of `JudgeLimits`.
        profile: the scoring profile (rubric weights, temperature, seed, budget, prices).
        redis: shared Redis for the rate limit and the judgment cache; None disables both.
        cache_redis: the judgment cache's own Redis; None: the cache uses ``redis``.
        limits: explicit limits; taken from ``settings`` when None.

    Returns:
        A thread-safe `Judge` (or `JudgePanel`), or None when no judge model is configured
        (tier 2 is skipped).
    """
    configs = panel_configs(settings, profile)
    judges = [
        Judge(
            model_id=config.model_id,
            model_factory=partial(open_model, config),
            profile=profile,
            limits=limits or limits_from_settings(settings),
            redis=redis,
            cache_redis=cache_redis,
            redactor=redactor_for(settings),
        )
        for config in configs
    ]
    if not judges:
        return None
    return judges[0] if len(judges) == 1 else JudgePanel(judges)
