"""A judge panel: several judge models score every rubric, and the rubric score is their median.

`JudgePanel.evaluate` runs its members' judgments at once in one event loop, each with its own
model, retries, cache entries and rate-limit bucket, all against the same deadline and each with
an equal share of the profile's budget. `combine` folds their results into one `JudgeResult`:
per rubric the median of the scores of the members that succeeded, counts and costs summed,
each member's own result kept under ``panel`` and their agreement under ``agreement``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Sequence
from statistics import median

from evalq.core.results import (
    Agreement,
    JudgeIdentity,
    JudgeResult,
    PanelMember,
    RubricResult,
    RubricStatus,
)
from evalq.core.schemas import Submission, Task
from evalq.judge.agreement import krippendorff_alpha
from evalq.judge.judge import Judge, run_blocking


class JudgePanel:
    """Two or more `Judge` s of one profile, each on its own model, judging together.

    Args:
        members: the judges; the first is the configured judge model (its id is the result's
            ``model``).
    """

    def __init__(self, members: Sequence[Judge]) -> None:
        if len(members) < 2:
            raise ValueError("a panel needs two or more judges; use the one Judge itself")
        self.members = tuple(members)
        self.model_id = members[0].model_id
        self.profile = members[0].profile

    def evaluate(self, submission: Submission, task: Task, *, deadline_s: float) -> JudgeResult:
        """Judge ``submission`` with every member within ``deadline_s`` seconds, then `combine`.

        Never raises for model, HTTP, Redis or validation faults (as `Judge.evaluate`).
        """
        deadline = time.monotonic() + max(0.0, deadline_s)
        return run_blocking(self._evaluate(submission, task, deadline))

    async def _evaluate(self, submission: Submission, task: Task, deadline: float) -> JudgeResult:
        budget = self.profile.judge.budget_usd
        share = budget / len(self.members)
        results = await asyncio.gather(
            *(
                member.evaluate_async(submission, task, deadline=deadline, budget_usd=share)
                for member in self.members
            )
        )
        return combine(results, budget_usd=budget)


def combine(results: Sequence[JudgeResult], *, budget_usd: float) -> JudgeResult:
    """One result from the panel members' results (in member order).

    A rubric is ``ok`` with the median of the normalised scores of the members that scored it,
    ``failed`` when none did and one failed (with the first failure's error), else ``skipped``.
    A member that failed stays in ``panel`` with its error and out of the median.
    """
    names = [r.rubric for r in results[0].rubrics]
    rubrics = tuple(_rubric([result.rubric(name) for result in results]) for name in names)
    costs = [r.cost_usd for r in results]
    return JudgeResult(
        model=results[0].model,
        scores={r.rubric: r.score for r in rubrics},
        failed=any(r.status == "failed" for r in rubrics),
        errors=tuple(
            r.error.model_copy(update={"rubric": r.rubric})
            for r in rubrics
            if r.status == "failed" and r.error
        ),
        rubrics=rubrics,
        cost_usd=None if None in costs else sum(c for c in costs if c is not None),
        budget_usd=budget_usd,
        redis_error=next((r.redis_error for r in results if r.redis_error), None),
        panel=tuple(
            PanelMember(
                model=r.model, rubrics=r.rubrics, cost_usd=r.cost_usd, priced_by=r.priced_by
            )
            for r in results
        ),
        agreement=panel_agreement(results),
        identity=panel_identity(results),
    )


def panel_identity(results: Sequence[JudgeResult]) -> JudgeIdentity | None:
    """The panel as one judge: its members' models, providers and versions joined in member
    order (the prompt and rubrics are the panel's, asked of every member)."""
    found = [r.identity for r in results if r.identity is not None]
    if not found:
        return None
    return JudgeIdentity(
        model=" + ".join(i.model for i in found),
        provider=" + ".join(i.provider or "?" for i in found),
        version=" + ".join(i.version or "?" for i in found),
        prompt_digest=found[0].prompt_digest,
        rubric_digest=found[0].rubric_digest,
    )


def panel_agreement(results: Sequence[JudgeResult]) -> Agreement:
    """Krippendorff's ordinal alpha of the members' 1-5 scores over the (rubric, criterion) units.

    A member has a value on a unit when it scored that rubric (status ``ok``); units scored by
    fewer than two members do not count.
    """
    units: dict[tuple[str, str], None] = {}  # insertion-ordered set
    for result in results:
        for rubric in result.rubrics:
            if rubric.status == "ok":
                units.update(dict.fromkeys((rubric.rubric, c) for c in rubric.criteria))
    ratings = [[_score(result, unit) for unit in units] for result in results]
    pairable = [i for i in range(len(units)) if sum(row[i] is not None for row in ratings) >= 2]
    members = sum(any(row[i] is not None for i in pairable) for row in ratings)
    return Agreement(
        alpha=krippendorff_alpha(ratings, "ordinal"), units=len(pairable), members=members
    )


def _score(result: JudgeResult, unit: tuple[str, str]) -> int | None:
    rubric_name, criterion = unit
    rubric = result.rubric(rubric_name)
    scored = rubric.criteria.get(criterion) if rubric.status == "ok" else None
    return None if scored is None else scored.score


def _rubric(results: Sequence[RubricResult]) -> RubricResult:
    """One rubric's results of every member, folded into one."""
    scores = [r.score for r in results if r.status == "ok" and r.score is not None]
    failures = [r for r in results if r.status == "failed"]
    status: RubricStatus = "ok" if scores else "failed" if failures else "skipped"
    first = results[0]
    return RubricResult(
        rubric=first.rubric,
        status=status,
        score=median(scores) if scores else None,
        skip_reason=first.skip_reason if status == "skipped" else None,
        error=failures[0].error if status == "failed" else None,
        attempts=sum(r.attempts for r in results),
        transport_retries=sum(r.transport_retries for r in results),
        rate_limited=sum(r.rate_limited for r in results),
        validation_retries=sum(r.validation_retries for r in results),
        cache_hit=all(r.cache_hit for r in results),
        input_tokens=sum(r.input_tokens for r in results),
        output_tokens=sum(r.output_tokens for r in results),
        cost_usd=_known_sum(r.cost_usd for r in results),
        truncated=first.truncated,
        waited_s=sum(r.waited_s for r in results),
    )


def _known_sum(values: Iterable[float | None]) -> float | None:
    """The sum of the values that are known; None when none is."""
    known = [v for v in values if v is not None]
    return sum(known) if known else None
