"""`Judge`: run the tier-2 rubrics on one submission; every fault becomes data, never an exception.

`Judge.evaluate` is synchronous and thread-safe: each call runs its own event loop and builds its
own model (and HTTP client) for it, so many calls can run at once in a worker's thread pool.
Rubrics run one after another within a call, so the budget is checked between them.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import redis
from pydantic import BaseModel, ValidationError
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings

from evalq.core.errors import InvalidInput
from evalq.core.profile import Profile
from evalq.core.redact import Redactor
from evalq.core.results import CriterionScore, JudgeResult, RubricResult
from evalq.core.schemas import Submission, Task
from evalq.judge.ask import ask, error_data
from evalq.judge.cache import JudgmentCache, cache_key
from evalq.judge.config import JudgeLimits
from evalq.judge.cost import Spend
from evalq.judge.guarded import RedisHealth
from evalq.judge.identity import judge_identity
from evalq.judge.inputs import rubric_input
from evalq.judge.outcome import rubric_score
from evalq.judge.ratelimit import SharedRateLimit
from evalq.judge.rubrics import RUBRICS, Rubric, Verdict

log = logging.getLogger(__name__)
T = TypeVar("T")


def run_blocking(work: Coroutine[Any, Any, T]) -> T:
    """Run ``work`` to its end in a new event loop: here, or in a thread when called from async
    code (a running loop cannot be blocked on)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, work).result()


class _WithConfidence(BaseModel):
    """A cached verdict of a logprobs judge, with the probability the model gave it."""

    verdict: dict[str, Any]
    confidence: float | None


def check_weights(weights: dict[str, dict[str, float]], rubrics: tuple[Rubric, ...]) -> None:
    """Reject profile weights that name unknown criteria or are all zero (`InvalidInput`)."""
    problems = []
    for rubric in rubrics:
        field = f"profile.judge.{rubric.name}.weights"
        unknown = sorted(set(weights[rubric.name]) - set(rubric.criteria))
        if unknown:
            problems.append((field, f"unknown criteria {unknown}; known: {list(rubric.criteria)}"))
        if sum(weights[rubric.name].values()) <= 0:
            problems.append((field, "weights must not all be zero"))
    if problems:
        raise InvalidInput(problems)


class Judge:
    """The tier-2 judge of one model and one profile.

    Args:
        model_id: identity of the judge model (cache keys, rate-limit buckets, pricing, reports).
        model_factory: builds a fresh model per evaluation (it is entered with ``async with``).
        profile: the scoring profile; ``profile.judge`` holds weights, temperature, seed, budget,
            paper length, and ``profile.pricing`` token prices that override genai-prices.
        limits: retries, timeouts, rate limit and cache settings.
        redis: shared Redis for the rate limit and the cache; None disables both.
        cache_redis: the cache's own Redis (`Settings.judge_cache_url`); None: ``redis``.
        redactor: removes secrets from the error messages the result carries; without one,
            only URL userinfo is removed (`build_judge` passes the one of its Settings).
        logprobs: ask for token logprobs (OpenAI-compatible models) and record each rubric's
            verdict probability as its ``confidence`` (a cascade level's confidence).
        stated: ask the model for its probability that its scores are right (a field added to
            the verdict) and record it as each rubric's ``confidence``.
    """

    def __init__(
        self,
        *,
        model_id: str,
        model_factory: Callable[[], Model],
        profile: Profile,
        limits: JudgeLimits | None = None,
        redis: redis.Redis | None = None,
        cache_redis: redis.Redis | None = None,
        redactor: Redactor | None = None,
        logprobs: bool = False,
        stated: bool = False,
    ) -> None:
        self.model_id = model_id
        self.stated = stated
        self.redactor = redactor or Redactor()
        self.model_factory = model_factory
        self.profile = profile
        self.limits = limits or JudgeLimits()
        self.rubrics: tuple[Rubric, ...] = RUBRICS
        self.weights = profile.judge.rubric_weights()
        check_weights(self.weights, self.rubrics)
        cache_client = cache_redis or redis
        self.cache = (
            JudgmentCache(
                cache_client,
                self.limits.cache_ttl_s,
                self.limits.cache_max_entries,
                self.limits.key_prefix,
            )
            if cache_client is not None
            else None
        )
        self.limiter = (
            SharedRateLimit(
                redis,
                model_id,
                self.limits.requests_per_minute,
                self.limits.tokens_per_minute,
                self.limits.key_prefix,
            )
            if redis is not None
            else None
        )
        self.settings: ModelSettings = {
            "temperature": profile.judge.temperature,
            "max_tokens": self.limits.max_output_tokens,
        }
        if profile.judge.seed is not None:
            self.settings["seed"] = profile.judge.seed
        if logprobs:  # part of the cache key too: a cached verdict then carries its confidence
            self.settings["openai_logprobs"] = True  # type: ignore[typeddict-unknown-key]

    def evaluate(self, submission: Submission, task: Task, *, deadline_s: float) -> JudgeResult:
        """Judge ``submission`` on every rubric that applies, within ``deadline_s`` seconds.

        Never raises for model, HTTP, Redis or validation faults: a rubric that applied but could
        not be judged is recorded with its error and ``failed`` is set; a rubric without input
        is skipped as not applicable; a spent budget skips the rest.
        """
        deadline = time.monotonic() + max(0.0, deadline_s)
        return run_blocking(self.evaluate_async(submission, task, deadline=deadline))

    async def evaluate_async(
        self,
        submission: Submission,
        task: Task,
        *,
        deadline: float,
        budget_usd: float | None = None,
    ) -> JudgeResult:
        """`evaluate` in the caller's event loop, until ``deadline`` (a `time.monotonic` time).

        Args:
            submission: the run to judge.
            task: its task.
            deadline: when to stop asking.
            budget_usd: dollars this judgment may spend; the profile's ``budget_usd`` when None
                (a panel gives each member its share).
        """
        budget = self.profile.judge.budget_usd if budget_usd is None else budget_usd
        spend = Spend(self.profile, self.model_id, budget)
        health = RedisHealth()
        outcomes: list[RubricResult] = []
        built: Model | None = None
        try:
            model = built = self.model_factory()
            async with model:
                for rubric in self.rubrics:
                    outcomes.append(
                        await self._rubric(rubric, submission, task, model, spend, health, deadline)
                    )
        except Exception as error:  # the model could not even be built or closed
            log.warning("judge model setup failed: %s", type(error).__name__)
            done = {o.rubric for o in outcomes}
            failure = error_data(error, 0, "permanent", self.redactor)
            outcomes += [
                RubricResult(rubric=r.name, status="failed", error=failure)
                for r in self.rubrics
                if r.name not in done
            ]
        errors = tuple(
            o.error.model_copy(update={"rubric": o.rubric})
            for o in outcomes
            if o.status == "failed" and o.error
        )
        return JudgeResult(
            scores={o.rubric: o.score for o in outcomes},
            failed=any(o.status == "failed" for o in outcomes),
            errors=errors,
            rubrics=tuple(outcomes),
            model=self.model_id,
            cost_usd=spend.cost_usd,
            priced_by=spend.priced_by,
            budget_usd=budget,
            redis_error=None if health.error is None else self.redactor.text(health.error),
            identity=judge_identity(self.model_id, built, self.rubrics),
        )

    async def _rubric(
        self,
        rubric: Rubric,
        submission: Submission,
        task: Task,
        model: Model,
        spend: Spend,
        health: RedisHealth,
        deadline: float,
    ) -> RubricResult:
        given = rubric_input(rubric, submission, task, self.profile.judge.paper_chars)
        if given.not_applicable is not None:
            return RubricResult(
                rubric=rubric.name,
                status="skipped",
                skip_reason=f"not applicable: {given.not_applicable}",
            )
        native = bool(model.profile.get("supports_json_schema_output"))
        sampling: dict[str, object] = dict(self.settings)
        if self.stated:  # another question (its answer has a probability): another key
            sampling["confidence"] = "stated"
        key = cache_key(
            prefix=self.limits.key_prefix,
            model=self.model_id,
            rubric=rubric,
            output_mode="native" if native else "tool",
            fields=given.fields,
            sampling=sampling,
        )
        cached, cached_confidence = self._cached(rubric, key, health)
        if cached is not None:
            cached_score, cached_criteria = rubric_score(cached, self.weights[rubric.name])
            return RubricResult(
                confidence=cached_confidence,
                rubric=rubric.name,
                status="ok",
                score=cached_score,
                criteria=cached_criteria,
                cache_hit=True,
                truncated=given.truncated,
                cost_usd=spend.cost_of(0, 0),
            )
        if spend.exhausted:
            return RubricResult(
                rubric=rubric.name,
                status="skipped",
                skip_reason="budget",
                truncated=given.truncated,
            )
        asked = await ask(
            rubric,
            given.fields,
            model=model,
            native=native,
            settings=self.settings,
            limits=self.limits,
            spend=spend,
            limiter=self.limiter,
            health=health,
            deadline=deadline,
            redactor=self.redactor,
            stated=self.stated,
        )
        score = None
        criteria: dict[str, CriterionScore] = {}
        if asked.verdict is not None:
            score, criteria = rubric_score(asked.verdict, self.weights[rubric.name])
            self._store(key, asked.verdict, asked.confidence, health)
        stats = asked.stats
        return RubricResult(
            rubric=rubric.name,
            status=asked.status,
            score=score,
            criteria=criteria,
            confidence=asked.confidence,
            skip_reason="budget" if asked.status == "skipped" else None,
            error=asked.error,
            attempts=stats.requests,
            transport_retries=asked.transport_retries,
            rate_limited=asked.rate_limited,
            validation_retries=stats.validation_retries,
            input_tokens=stats.input_tokens,
            output_tokens=stats.output_tokens,
            cost_usd=spend.cost_of(stats.input_tokens, stats.output_tokens),
            truncated=given.truncated,
            waited_s=asked.waited_s + stats.rate_limit_wait_s,
        )

    @property
    def _keeps_confidence(self) -> bool:
        """Whether a cached verdict is stored with its confidence (logprobs or stated)."""
        return self.stated or bool(self.settings.get("openai_logprobs"))

    def _cached(
        self, rubric: Rubric, key: str, health: RedisHealth
    ) -> tuple[Verdict | None, float | None]:
        """The cached verdict (and, for a logprobs judge, its stored confidence)."""
        if self.cache is None or health.error is not None:
            return None, None
        try:
            blob = self.cache.get(key)
            if blob is None:
                return None, None
            if not self._keeps_confidence:
                return rubric.verdict.model_validate_json(blob), None
            stored = _WithConfidence.model_validate_json(blob)
            return rubric.verdict.model_validate(stored.verdict), stored.confidence
        except redis.RedisError as error:
            health.fail(error)
        except ValidationError:
            log.warning("judge cache entry %s is not a valid verdict; asking the model", key)
        return None, None

    def _store(
        self, key: str, verdict: Verdict, confidence: float | None, health: RedisHealth
    ) -> None:
        if self.cache is None or health.error is not None:
            return
        blob = verdict.model_dump_json()
        if self._keeps_confidence:
            stored = _WithConfidence(verdict=verdict.model_dump(), confidence=confidence)
            blob = stored.model_dump_json()
        try:
            self.cache.put(key, blob.encode())
        except redis.RedisError as error:
            health.fail(error)
