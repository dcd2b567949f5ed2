"""A judge cascade: levels asked cheapest first until one is confident enough (Trust or Escalate).

Each level is one model asked ``samples`` times (seeds 0..samples-1, so each sample is its own
cached judgment); its confidence is the lowest, over the rubrics it scored, of the share of its
samples that gave the most common 1-5 score (`evalq.judge.calibration.sample_agreement`). A
level whose confidence reaches its calibrated threshold (`evalq judge calibrate`) decides; its
rubric scores are the median of its samples. When none does, the run is "judge uncertain": the
top level's scores are kept and marked so. A seeded share of runs (``audit_share``, drawn from a
hash of the run's id, so a redelivery draws the same) goes to the top level whatever the lower
levels said, so the guarantee keeps being measured on live traffic.

Failures follow the judge's rules: a level whose samples all failed on a rubric has no
confidence and escalates; a failure of the level whose scores stand makes the result ``failed``
(recorded, never a 0). Every level shares the judge's rate limit and cache (its samples are
ordinary `Judge` s); the budget is split evenly over every sample of every level.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Sequence
from typing import cast

from evalq.core.profile import CascadeProfile
from evalq.core.results import CascadeRecord, JudgeResult, LevelOutcome
from evalq.core.schemas import Submission, Task
from evalq.judge.calibration import sample_agreement
from evalq.judge.judge import Judge, run_blocking
from evalq.judge.panel import combine
from evalq.judge.validation import nearest_step, on_label_scale


class JudgeCascade:
    """Levels of sample judges, cheapest first, and the cascade's profile section.

    Args:
        levels: per level, its judges (one per sample, same model, seeds 0..k-1).
        cascade: thresholds, audit share and seed, the calibration's name.
    """

    def __init__(self, levels: Sequence[Sequence[Judge]], cascade: CascadeProfile) -> None:
        if len(levels) != len(cascade.levels) or not all(levels):
            raise ValueError("one non-empty list of sample judges per cascade level")
        self.levels = tuple(tuple(samples) for samples in levels)
        self.cascade = cascade
        self.model_id = self.levels[-1][0].model_id
        self.profile = self.levels[0][0].profile

    def evaluate(self, submission: Submission, task: Task, *, deadline_s: float) -> JudgeResult:
        """Judge ``submission`` up the levels within ``deadline_s`` seconds (never raises for
        model, HTTP, Redis or validation faults, as `Judge.evaluate`)."""
        deadline = time.monotonic() + max(0.0, deadline_s)
        return run_blocking(self._evaluate(submission, task, deadline))

    async def _evaluate(self, submission: Submission, task: Task, deadline: float) -> JudgeResult:
        budget = self.profile.judge.budget_usd
        share = budget / sum(len(samples) for samples in self.levels)
        audited = is_audited(submission.id, self.cascade.audit_share, self.cascade.audit_seed)
        asked: list[list[JudgeResult]] = []
        decided: int | None = None
        confidence: float | None = None
        for index, samples in enumerate(self.levels):
            results = list(
                await asyncio.gather(
                    *(
                        judge.evaluate_async(submission, task, deadline=deadline, budget_usd=share)
                        for judge in samples
                    )
                )
            )
            asked.append(results)
            level_confidence = confidence_of(results)
            threshold = self.cascade.levels[index].threshold
            nothing_to_judge = all(
                rubric.status == "skipped" for result in results for rubric in result.rubrics
            )
            confident = (
                threshold is not None
                and level_confidence is not None
                and level_confidence >= threshold
            )
            if decided is None and (confident or nothing_to_judge):
                decided, confidence = index, level_confidence
                if not audited or nothing_to_judge:
                    break
        standing = len(asked) - 1 if decided is None or audited else decided
        if decided is None:
            confidence = confidence_of(asked[-1])
        result = combine(asked[standing], budget_usd=budget)
        costs = [r.cost_usd for level in asked for r in level]
        record = CascadeRecord(
            level=decided,
            model=self.levels[standing][0].model_id,
            confidence=confidence,
            threshold=None if decided is None else self.cascade.levels[decided].threshold,
            levels_asked=len(asked),
            levels=len(self.levels),
            audited=audited and len(asked) == len(self.levels),
            calibration=self.cascade.calibration,
            asked=tuple(
                LevelOutcome(
                    level=index,
                    model=self.levels[index][0].model_id,
                    confidence=confidence_of(results),
                    steps=steps_of(results),
                )
                for index, results in enumerate(asked)
            ),
        )
        return result.model_copy(
            update={
                "model": record.model,
                "panel": (),
                "agreement": None,
                "cost_usd": None if None in costs else sum(c for c in costs if c is not None),
                "cascade": record,
            }
        )


def confidence_of(samples: Sequence[JudgeResult]) -> float | None:
    """The lowest share, over the rubrics scored, of samples agreeing on the 1-5 score.

    A sample that failed or skipped a rubric counts as disagreeing there; None when no sample
    scored any rubric (nothing to be confident about).
    """
    shares = []
    for name in samples[0].scores:
        steps = [
            nearest_step(on_label_scale(score))
            for result in samples
            if (score := result.scores.get(name)) is not None
        ]
        if steps:
            _, share = sample_agreement(steps)
            shares.append(share * len(steps) / len(samples))
    return min(shares) if shares else None


def steps_of(samples: Sequence[JudgeResult]) -> dict[str, int | None]:
    """Per rubric, the most common 1-5 step among the samples that scored it (None: none)."""
    steps: dict[str, int | None] = {}
    for name in samples[0].scores:
        scored = [
            nearest_step(on_label_scale(score))
            for result in samples
            if (score := result.scores.get(name)) is not None
        ]
        steps[name] = cast(int, sample_agreement(scored)[0]) if scored else None
    return steps


def is_audited(submission_id: str, share: float, seed: int) -> bool:
    """Whether the run is in the audit share: a hash of the seed and the id, below ``share``."""
    digest = hashlib.sha256(f"{seed}:{submission_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share
