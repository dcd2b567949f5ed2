"""A judge cascade: levels asked cheapest first until one is confident enough (Trust or Escalate).

Each level is one model asked ``samples`` times (seeds 0..samples-1, so each sample is its own
cached judgment); its confidence is the lowest, over the rubrics it scored, of the share of its
samples that gave the most common 1-5 score (`evalq.judge.calibration.sample_agreement`), or,
for a level whose ``confidence`` is ``logprobs``, of the probability the model gave its verdict
(token logprobs, `evalq.judge.logprobs`; the samples' agreement when none came back). A
level whose confidence reaches its calibrated threshold (`evalq judge calibrate`) decides; its
rubric scores are the median of its samples. When none does, the run is "judge uncertain": the
top level's scores are kept and marked so. A seeded share of runs (``audit_share``, drawn from a
hash of the run's id, so a redelivery draws the same) goes to the top level whatever the lower
levels said, so the guarantee keeps being measured on live traffic. A level below the top with
no threshold (calibration never trusted it) decides nothing, so it is left off the route of the
other runs (recorded as ``skipped``): it would only cost; the audited runs still ask it, so the
next calibration can test it again.

Failures follow the judge's rules: a level whose samples all failed on a rubric has no
confidence and escalates; a failure of the level whose scores stand makes the result ``failed``
(recorded, never a 0). Every level shares the judge's rate limit and cache (its samples are
ordinary `Judge` s); the budget is split evenly over every sample of every level on the run's route.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Sequence
from typing import cast

from evalq.core.profile import CascadeProfile, LevelConfidence
from evalq.core.results import CascadeRecord, JudgeIdentity, JudgeResult, LevelOutcome
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
        audited = is_audited(submission.id, self.cascade.audit_share, self.cascade.audit_seed)
        top = len(self.levels) - 1
        skipped = tuple(
            index
            for index, level in enumerate(self.cascade.levels)
            if level.threshold is None and index < top and not audited
        )
        route = [index for index in range(len(self.levels)) if index not in skipped]
        share = budget / sum(len(self.levels[index]) for index in route)
        asked: list[tuple[int, list[JudgeResult], float | None, LevelConfidence]] = []
        decided: int | None = None
        confidence: float | None = None
        for index in route:
            results = list(
                await asyncio.gather(
                    *(
                        judge.evaluate_async(submission, task, deadline=deadline, budget_usd=share)
                        for judge in self.levels[index]
                    )
                )
            )
            level_confidence, kind = confidence_of(results, self.cascade.levels[index].confidence)
            asked.append((index, results, level_confidence, kind))
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
        standing = asked[-1]  # the decider, or the top (audited or uncertain)
        if decided is None:
            confidence = asked[-1][2]
        result = combine(standing[1], budget_usd=budget)
        costs = [r.cost_usd for _, level, _, _ in asked for r in level]
        record = CascadeRecord(
            level=decided,
            model=self.levels[standing[0]][0].model_id,
            confidence=confidence,
            threshold=None if decided is None else self.cascade.levels[decided].threshold,
            levels_asked=len(asked),
            levels=len(self.levels),
            audited=audited and len(asked) == len(self.levels),
            calibration=self.cascade.calibration,
            skipped=skipped,
            asked=tuple(
                LevelOutcome(
                    level=index,
                    model=self.levels[index][0].model_id,
                    confidence=level_confidence,
                    confidence_kind=kind,
                    steps=steps_of(results),
                )
                for index, results, level_confidence, kind in asked
            ),
        )
        return result.model_copy(
            update={
                "model": record.model,
                "panel": (),
                "agreement": None,
                "cost_usd": None if None in costs else sum(c for c in costs if c is not None),
                "cascade": record,
                "identity": self.identity(result.identity),
            }
        )

    def identity(self, decider: JudgeIdentity | None) -> JudgeIdentity | None:
        """The cascade as one judge, whichever level decided a run: its levels' models and
        providers joined cheapest first (so a run decided low and one decided high are one
        series; changing a level's model is a change of judge). The prompt and rubrics are the
        decider's (every level asks the same); versions are not joined, as levels not asked
        for a run resolved none."""
        if decider is None:
            return None
        models = [samples[0].model_id for samples in self.levels]
        return JudgeIdentity(
            model=" > ".join(models),
            provider=" > ".join(m.partition(":")[0] or "?" for m in models),
            version=None,
            prompt_digest=decider.prompt_digest,
            rubric_digest=decider.rubric_digest,
        )


def confidence_of(
    samples: Sequence[JudgeResult], kind: LevelConfidence = "samples"
) -> tuple[float | None, LevelConfidence]:
    """A level's confidence: the lowest, over the rubrics scored, of the rubric's confidence.

    ``samples``: a rubric's confidence is the share of samples agreeing on its 1-5 step.
    ``logprobs`` / ``stated``: the mean over the samples of the probability each gave its
    verdict (its ``confidence``: from token logprobs, or as the model stated it); when a sample
    scored the rubric without one (no logprobs returned), the
    level falls back on the samples' agreement for every rubric, and says so in the kind
    returned. A sample that failed or skipped a rubric counts as disagreeing (probability 0)
    there. None when no sample scored any rubric (nothing to be confident about).
    """
    names = list(samples[0].scores)
    if kind != "samples":
        shares = []
        for name in names:
            given = [
                rubric.confidence
                for result in samples
                for rubric in result.rubrics
                if rubric.rubric == name and rubric.status == "ok"
            ]
            if None in given:
                break
            if given:
                shares.append(sum(c for c in given if c is not None) / len(samples))
        else:
            return (min(shares) if shares else None), kind
    shares = []
    for name in names:
        steps = [
            nearest_step(on_label_scale(score))
            for result in samples
            if (score := result.scores.get(name)) is not None
        ]
        if steps:
            _, agreeing = sample_agreement(steps)
            shares.append(agreeing * len(steps) / len(samples))
    return (min(shares) if shares else None), "samples"


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
