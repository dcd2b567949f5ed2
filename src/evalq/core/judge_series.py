"""A task's judges over time: the series each judged score belongs to, the breaks between
them, and the bridging sample that measures what a break changed (docs/judge.md, "Judge
changes"). Computed by `evalq.read.judge_series`; kept here, with no dependency, so the HTTP
clients return it as it is served.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from evalq.core.results import JudgeIdentity

JudgedSource = Literal["tier", "rejudge"]
"""Where a judged result came from: the run's judge tier (its score) or a re-judge (a series
written beside the scores, never replacing them)."""
BridgeStatus = Literal["bridged", "bridging", "not bridged"]


def series_id(identity: JudgeIdentity) -> str:
    """The series a judge's scores form: 16 hex digits of SHA-256 over its whole identity, so
    another model, provider, version, prompt or rubric starts another series."""
    text = json.dumps(identity.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class JudgeSeries(_Frozen):
    """The scores one judge gave a task's runs, in the order judges first appeared."""

    series: str = Field(description="16 hex digits of the judge identity's digest.")
    identity: JudgeIdentity
    scored: int = Field(description="Runs whose stored score this judge gave (judge tier).")
    rejudged: int = Field(description="Runs this judge re-judged (a series beside the scores).")
    first_judged_at: datetime
    last_judged_at: datetime


class Bridge(_Frozen):
    """What a change of judge did to a task's scores, measured on runs both judges judged.

    A run's judge score is the mean of its rubric scores (each in [0, 1]) over the rubrics
    both judges scored. Differences are ``new - old``.
    """

    old: str = Field(description="The series before the break.")
    new: str = Field(description="The series after it.")
    pairs: int = Field(description="Runs judged by both.")
    needed: int | None = Field(
        description="Runs both must judge to detect a bias of ``detect`` with 80% power at "
        "``alpha`` (evalq.stats.power, on the pairs' own spread); null until two pairs "
        "measure the spread, or when more than 100,000 would be needed."
    )
    detect: float = Field(description="The bias worth detecting, on the judge's [0, 1] scale.")
    alpha: float
    level: float = Field(description="Level of the intervals (the profile's confidence level).")
    bias: float | None = Field(description="Mean of new - old; null without pairs.")
    bias_low: float | None = Field(description="Student-t interval of the bias (3+ pairs).")
    bias_high: float | None
    agreement: float | None = Field(
        description="Krippendorff's alpha (interval) between the two judges' scores; null when "
        "undefined (no variation)."
    )
    agreement_low: float | None = Field(
        description="Percentile bootstrap interval of the agreement, 1,000 resamples of the "
        "runs (seed 0; 5+ pairs)."
    )
    agreement_high: float | None
    status: BridgeStatus = Field(
        description="bridged: pairs >= needed; bridging: some pairs, fewer than needed; "
        "not bridged: none."
    )
    note: str


class JudgeHistory(_Frozen):
    """Body of GET /v1/tasks/{id}/judges: a task's judge series, its breaks and their bridges."""

    task_id: str
    series: list[JudgeSeries] = Field(description="By the first time each judge scored a run.")
    mixed: bool = Field(description="The task's scores come from more than one judge.")
    bridges: list[Bridge] = Field(description="One per break, between consecutive series.")
    mark: str | None = Field(
        description='"judge changed: ..." when scores of two or more judges are mixed; what a '
        "board, comparison, gate and monitor show beside their figures."
    )
