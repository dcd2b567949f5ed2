"""A model wrapper that every judge request goes through: budget, deadline, rate limit, counts.

pydantic-ai's output retries send further requests inside one agent run; wrapping the model
rather than the run puts each of them under the same budget, deadline and shared rate limit, and
counts them, so the attempts reported are the requests actually sent.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import redis
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from evalq.judge.cost import Spend
from evalq.judge.ratelimit import SharedRateLimit
from evalq.judge.retry import BudgetSpent, DeadlineReached

CHARS_PER_TOKEN = 4
"""Rough prompt-size estimate for the token bucket (the bill uses the provider's own counts)."""


@dataclass
class CallStats:
    """What the requests of one rubric cost and how they went (mutable, one per rubric)."""

    requests: int = 0
    validation_retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    rate_limit_wait_s: float = 0.0


@dataclass
class RedisHealth:
    """Whether the shared Redis answered during one evaluation.

    After the first failure the evaluation leaves Redis alone (no cache, no shared limit: the
    provider's own 429s still bound it), instead of paying the client's reconnect backoff on
    every call.
    """

    error: str | None = None

    def fail(self, error: Exception) -> None:
        """Record the first Redis failure."""
        if self.error is None:
            self.error = f"{type(error).__name__}: {error}"


def estimate_tokens(messages: list[ModelMessage]) -> int:
    """Approximate prompt tokens of ``messages``: characters of their text parts over four."""
    chars = 0
    for message in messages:
        instructions = getattr(message, "instructions", None)
        chars += len(instructions) if isinstance(instructions, str) else 0
        for part in message.parts:
            content = getattr(part, "content", "")
            chars += len(content) if isinstance(content, str) else len(str(content))
    return chars // CHARS_PER_TOKEN


class GuardedModel(WrapperModel):
    """Wrap a model so each request is budgeted, rate limited, deadline-checked and counted."""

    def __init__(
        self,
        wrapped: Model,
        *,
        stats: CallStats,
        spend: Spend,
        limiter: SharedRateLimit | None,
        health: RedisHealth,
        deadline: float,
        reserve_output_tokens: int,
    ) -> None:
        super().__init__(wrapped)
        self.stats = stats
        self.spend = spend
        self.limiter = limiter
        self.health = health
        self.deadline = deadline
        self.reserve_output_tokens = reserve_output_tokens

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        """Check budget and deadline, take from the shared buckets, send, count."""
        if self.spend.exhausted:
            raise BudgetSpent("the evaluation's judge budget is spent")
        if time.monotonic() >= self.deadline:
            raise DeadlineReached("no time left for another judge request")
        if self.limiter is not None and self.health.error is None:
            tokens = estimate_tokens(messages) + self.reserve_output_tokens
            try:
                waited = await self.limiter.take_async(tokens, deadline=self.deadline)
                self.stats.rate_limit_wait_s += waited
            except redis.RedisError as error:  # fail open: the provider's 429s still bound us
                self.health.fail(error)
        self.stats.requests += 1
        if len(messages) > 1:  # a later request in the same run answers rejected output
            self.stats.validation_retries += 1
        response = await super().request(messages, model_settings, model_request_parameters)
        usage = response.usage
        self.stats.input_tokens += usage.input_tokens
        self.stats.output_tokens += usage.output_tokens
        self.spend.add(usage.input_tokens, usage.output_tokens)
        return response
