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
from evalq.judge.cascade import JudgeCascade
from evalq.judge.config import JudgeLimits, limits_from_settings
from evalq.judge.judge import Judge
from evalq.judge.panel import JudgePanel
from evalq.judge.provider import (
    JudgeModelConfig,
    judge_model_config,
    level_config,
    open_model,
    panel_configs,
)

__all__ = [
    "Judge",
    "JudgeCascade",
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
) -> Judge | JudgePanel | JudgeCascade | None:
    """The judge for ``settings.judge_model`` (and ``judge_base_url``), or None if none is set.

    With models in ``profile.judge.panel`` it is a `JudgePanel` of the judge model and those
    (`evalq.judge.provider.panel_configs` says how each is reached). With a
    ``profile.judge.cascade`` it is a `JudgeCascade` of its levels, each model reached on its
    level's ``base_url`` with its ``key`` when set, otherwise as a panel member is
    (`evalq.judge.provider.level_config`), one `Judge` per sample with seeds 0..samples-1,
    asking for token logprobs when the level's confidence is ``logprobs`` and for the model's
    stated probability when it is ``stated`` (the judge model
    switches the tier on; the levels replace it and the panel).

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
    cascade = profile.judge.cascade
    judge_model = judge_model_config(settings)
    if cascade is not None and judge_model is not None:
        levels = [
            [
                _judge(
                    level_config(judge_model, level.model, base_url=level.base_url,
                                 key=level.key, keys=settings.judge_keys),
                    _seeded(profile, seed), settings, redis=redis, cache_redis=cache_redis,
                    limits=limits, logprobs=level.confidence == "logprobs",
                    stated=level.confidence == "stated",
                )
                for seed in range(level.samples)
            ]
            for level in cascade.levels
        ]  # fmt: skip
        return JudgeCascade(levels, cascade)
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


def _judge(
    config: JudgeModelConfig,
    profile: Profile,
    settings: Settings,
    *,
    redis: redis.Redis | None,
    cache_redis: redis.Redis | None,
    limits: JudgeLimits | None,
    logprobs: bool = False,
    stated: bool = False,
) -> Judge:
    return Judge(
        model_id=config.model_id,
        model_factory=partial(open_model, config),
        profile=profile,
        limits=limits or limits_from_settings(settings),
        redis=redis,
        cache_redis=cache_redis,
        redactor=redactor_for(settings),
        logprobs=logprobs,
        stated=stated,
    )


def _seeded(profile: Profile, seed: int) -> Profile:
    """``profile`` with the judge's sampling seed set to ``seed`` (one per cascade sample)."""
    return profile.model_copy(update={"judge": profile.judge.model_copy(update={"seed": seed})})
