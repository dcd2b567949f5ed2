"""Ask the model for one rubric's verdict: fenced prompt, bounded retries, errors as data."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass

from pydantic_ai import NativeOutput
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings

from evalq.core.redact import Redactor
from evalq.core.results import ErrorKind, ErrorRecord, RubricStatus
from evalq.judge.config import JudgeLimits
from evalq.judge.cost import Spend
from evalq.judge.guarded import CallStats, GuardedModel, RedisHealth
from evalq.judge.logprobs import verdict_probability
from evalq.judge.prompts import build_prompt, data_instructions, new_nonce
from evalq.judge.ratelimit import SharedRateLimit
from evalq.judge.retry import (
    BudgetSpent,
    DeadlineReached,
    backoff_delay,
    classify,
    rate_limited,
    retry_after,
)
from evalq.judge.rubrics import Rubric, Verdict, with_stated_probability

MESSAGE_CHARS = 500


@dataclass(frozen=True)
class Asked:
    """How asking went: the verdict (None unless it succeeded) and what it took.

    Attributes:
        verdict: the validated answer, or None.
        status: ``ok``, ``failed`` (retries, time or validation ran out) or ``skipped`` (budget).
        error: the failure as data when failed.
        stats: requests, validation retries, tokens and rate-limit waits.
        transport_retries: runs repeated after a transient fault.
        rate_limited: runs the provider refused with 429 (retried or not).
        waited_s: seconds slept in backoff.
        confidence: the probability the model gave its verdict, from the answer's token
            logprobs (`evalq.judge.logprobs`); None when not asked for or not returned.
    """

    verdict: Verdict | None
    status: RubricStatus
    error: ErrorRecord | None
    stats: CallStats
    transport_retries: int
    waited_s: float
    rate_limited: int = 0
    confidence: float | None = None


def error_data(
    error: BaseException, attempts: int, kind: ErrorKind, redactor: Redactor
) -> ErrorRecord:
    """A failure as data: class name, message (secrets removed, then bounded), attempts, kind.

    Provider errors may echo the API key or the base URL's credentials; they are removed before
    the message is cut, so a cut never leaves part of a secret behind.
    """
    message = redactor.text(str(error) or type(error).__name__)
    if len(message) > MESSAGE_CHARS:
        message = message[: MESSAGE_CHARS - 3] + "..."
    return ErrorRecord(type=type(error).__name__, message=message, attempts=attempts, kind=kind)


async def ask(
    rubric: Rubric,
    fields: dict[str, str],
    *,
    model: Model,
    native: bool,
    settings: ModelSettings,
    limits: JudgeLimits,
    spend: Spend,
    limiter: SharedRateLimit | None,
    health: RedisHealth,
    deadline: float,
    redactor: Redactor,
    stated: bool = False,
) -> Asked:
    """Run ``rubric``'s agent on ``fields`` until it answers or a bound is reached.

    Transient faults are retried up to ``limits.max_attempts`` runs with jittered exponential
    backoff that honours Retry-After, while the next attempt still fits before ``deadline``;
    invalid answers get ``limits.output_retries`` more requests inside a run; permanent faults
    end at once. Each run uses a fresh fence nonce. A failure's message goes through
    ``redactor``. With ``stated``, the model is asked for its probability that its scores are
    right too (`with_stated_probability`); it becomes the answer's ``confidence``.
    """
    stats = CallStats()
    guarded = GuardedModel(
        model,
        stats=stats,
        spend=spend,
        limiter=limiter,
        health=health,
        deadline=deadline,
        reserve_output_tokens=limits.max_output_tokens,
    )
    rng = random.Random()
    runs, waited, limited = 0, 0.0, 0
    while True:
        runs += 1
        try:
            verdict, confidence = await _run(
                rubric, fields, guarded, native, settings, limits, deadline, stated
            )
        except BudgetSpent:
            return Asked(None, "skipped", None, stats, runs - 1, waited, limited)
        except Exception as error:
            kind = classify(error)
            limited += rate_limited(error)
            delay = None
            if kind == "transient" and runs < limits.max_attempts:
                delay = backoff_delay(
                    runs,
                    base_s=limits.backoff_base_s,
                    cap_s=limits.backoff_cap_s,
                    server_wait_s=retry_after(error),
                    rng=rng,
                )
                if time.monotonic() + delay >= deadline:
                    delay, kind = None, "deadline"
            if delay is None:
                failure = error_data(error, stats.requests, kind, redactor)
                return Asked(None, "failed", failure, stats, runs - 1, waited, limited)
            await asyncio.sleep(delay)
            waited += delay
            continue
        return Asked(verdict, "ok", None, stats, runs - 1, waited, limited, confidence)


async def _run(
    rubric: Rubric,
    fields: dict[str, str],
    model: Model,
    native: bool,
    settings: ModelSettings,
    limits: JudgeLimits,
    deadline: float,
    stated: bool = False,
) -> tuple[Verdict, float | None]:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise DeadlineReached("no time left for the judge")
    nonce = new_nonce()
    per_run: ModelSettings = {
        **settings,
        "timeout": min(limits.request_timeout_s, remaining),
        "max_retries": 0,  # the provider SDK's hidden retries would escape our counts
    }
    wanted = with_stated_probability(rubric.verdict) if stated else rubric.verdict
    output_type = NativeOutput(wanted) if native else wanted
    result = await rubric.agent.run(
        build_prompt(fields, nonce),
        model=model,
        output_type=output_type,
        instructions=data_instructions(nonce),
        model_settings=per_run,
        retries={"output": limits.output_retries},
        timeout=remaining,
    )
    verdict = result.output
    if not isinstance(verdict, rubric.verdict):  # strict: exactly this rubric's verdict type
        raise TypeError(f"judge returned {type(verdict).__name__}, not {rubric.verdict.__name__}")
    confidence = None
    if stated:
        confidence = float(getattr(verdict, "probability"))  # noqa: B009 (a field added at run time)
        verdict = rubric.verdict.model_validate(verdict.model_dump(exclude={"probability"}))
    elif settings.get("openai_logprobs"):
        details = result.response.provider_details or {}
        confidence = verdict_probability(details.get("logprobs"), len(rubric.criteria))
    return verdict, confidence
