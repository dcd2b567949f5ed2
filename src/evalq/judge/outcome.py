"""What one judge evaluation produced: scores, or errors as data, and what it cost."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

RubricStatus = Literal["ok", "failed", "skipped"]


@dataclass(frozen=True)
class RubricOutcome:
    """One rubric's result.

    Attributes:
        rubric: the rubric name.
        status: ``ok`` (scored), ``failed`` (applied but could not be judged), ``skipped``.
        score: weighted mean of the normalised criterion scores in [0, 1]; None unless ok.
        criteria: criterion -> {"score": 1-5, "normalised": (score-1)/4, "rationale": str}.
        skip_reason: why a skipped rubric was not judged (not applicable, or the budget).
        error: {"type", "message", "attempts"} when failed.
        attempts: model requests sent (transport retries and output retries included).
        transport_retries: retries after a transient fault (429, 5xx, timeout, reset).
        validation_retries: extra requests after an answer failed validation.
        cache_hit: the verdict came from the cache (no request, no cost).
        input_tokens: prompt tokens billed for this rubric, failed requests included.
        output_tokens: completion tokens billed for this rubric.
        cost_usd: dollars for those tokens; None when the model has no price.
        truncated: field -> {"original_chars", "kept_chars"} for each shortened input.
        waited_s: seconds spent in backoff and rate-limit waits.
    """

    rubric: str
    status: RubricStatus
    score: float | None = None
    criteria: dict[str, dict[str, Any]] = field(default_factory=dict)
    skip_reason: str | None = None
    error: dict[str, Any] | None = None
    attempts: int = 0
    transport_retries: int = 0
    validation_retries: int = 0
    cache_hit: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    truncated: dict[str, dict[str, int]] = field(default_factory=dict)
    waited_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "status": self.status,
            "score": self.score,
            "criteria": self.criteria,
            "skip_reason": self.skip_reason,
            "error": self.error,
            "attempts": self.attempts,
            "transport_retries": self.transport_retries,
            "validation_retries": self.validation_retries,
            "cache_hit": self.cache_hit,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
            "truncated": self.truncated,
            "waited_s": round(self.waited_s, 3),
        }


@dataclass(frozen=True)
class JudgeOutcome:
    """The result of `Judge.evaluate`: never raised, always returned.

    Attributes:
        scores: rubric -> normalised score in [0, 1], or None (not applicable, skipped, failed).
        failed: True when a rubric that applied could not be judged (retries or time ran out).
        errors: one {"rubric", "type", "message", "attempts"} per failed rubric.
        rubrics: the per-rubric details, in rubric order.
        model: the judge model id.
        cost_usd: total dollars; None when the model has no price in the profile.
        budget_usd: the evaluation's judge budget.
        redis_error: the first Redis failure, after which this evaluation ran without the
            shared cache and rate limit; None when Redis answered (or none is configured).
    """

    scores: dict[str, float | None]
    failed: bool
    errors: list[dict[str, Any]]
    rubrics: tuple[RubricOutcome, ...] = ()
    model: str = ""
    cost_usd: float | None = None
    budget_usd: float | None = None
    redis_error: str | None = None

    @property
    def attempts(self) -> int:
        """Model requests sent over all rubrics."""
        return sum(r.attempts for r in self.rubrics)

    @property
    def retries(self) -> int:
        """Transport and validation retries over all rubrics."""
        return sum(r.transport_retries + r.validation_retries for r in self.rubrics)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: scores, per-rubric details, totals, skipped rubrics with reasons."""
        return {
            "model": self.model,
            "scores": dict(self.scores),
            "failed": self.failed,
            "errors": list(self.errors),
            "rubrics": {r.rubric: r.to_dict() for r in self.rubrics},
            "skipped": {r.rubric: r.skip_reason for r in self.rubrics if r.status == "skipped"},
            "attempts": self.attempts,
            "transport_retries": sum(r.transport_retries for r in self.rubrics),
            "validation_retries": sum(r.validation_retries for r in self.rubrics),
            "cache_hits": sum(r.cache_hit for r in self.rubrics),
            "input_tokens": sum(r.input_tokens for r in self.rubrics),
            "output_tokens": sum(r.output_tokens for r in self.rubrics),
            "cost_usd": self.cost_usd,
            "budget_usd": self.budget_usd,
            "truncated": {r.rubric: r.truncated for r in self.rubrics if r.truncated},
            "redis_error": self.redis_error,
        }
