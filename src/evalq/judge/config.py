"""Operational limits of the judge: retries, timeouts, the shared rate limit, the cache.

These are deployment knobs, not scoring parameters, so they are not in the Profile (whose hash is
recorded with every score). They are read from `Settings` when it has them (``EVALQ_JUDGE_*``)
and fall back to the defaults below.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any


@dataclass(frozen=True)
class JudgeLimits:
    """Retry, timeout, rate-limit and cache knobs of one judge.

    Attributes:
        max_attempts: model calls per rubric for transient faults (429, 5xx, timeouts, resets),
            the first one included; permanent faults (400/401/403/404) are never retried.
        output_retries: extra requests pydantic-ai makes when the answer fails validation.
        request_timeout_s: client timeout of one HTTP request (capped by the time left).
        backoff_base_s: first backoff delay; doubles per retry, with full jitter in [d/2, d].
        backoff_cap_s: longest backoff delay (a longer Retry-After is still honoured).
        max_output_tokens: ``max_tokens`` sent with each request; also reserved in the TPM bucket.
        requests_per_minute: shared request budget per judge model (0 = unlimited).
        tokens_per_minute: shared token budget per judge model (0 = unlimited).
        cache_ttl_s: lifetime of a cached judgment in seconds (30 days).
        cache_max_entries: most cached judgments kept; inserting past it drops the oldest.
        key_prefix: prefix of every Redis key the judge writes.
    """

    max_attempts: int = 4
    output_retries: int = 2
    request_timeout_s: float = 60.0
    backoff_base_s: float = 1.0
    backoff_cap_s: float = 30.0
    max_output_tokens: int = 800
    requests_per_minute: int = 60
    tokens_per_minute: int = 200_000
    cache_ttl_s: int = 30 * 24 * 3600
    cache_max_entries: int = 50_000
    key_prefix: str = "evalq:judge"

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be >= 1")
        if self.output_retries < 0:
            raise ValueError("output_retries must be >= 0")
        if self.request_timeout_s <= 0 or self.backoff_base_s < 0 or self.backoff_cap_s < 0:
            raise ValueError("timeouts and backoff delays must be positive")
        if self.requests_per_minute < 0 or self.tokens_per_minute < 0:
            raise ValueError("rate limits must be >= 0 (0 = unlimited)")
        if self.cache_ttl_s <= 0 or self.cache_max_entries <= 0:
            raise ValueError("cache_ttl_s and cache_max_entries must be positive")


def limits_from_settings(settings: Any) -> JudgeLimits:
    """`JudgeLimits` from ``settings.judge_<field>`` where Settings defines it, defaults elsewhere.

    Settings may not define these fields yet; each one it does define (e.g. ``judge_max_attempts``
    from ``EVALQ_JUDGE_MAX_ATTEMPTS``) overrides the default.
    """
    overrides = {}
    for field in fields(JudgeLimits):
        value = getattr(settings, f"judge_{field.name}", None)
        if value is not None:
            overrides[field.name] = value
    return replace(JudgeLimits(), **overrides)
