"""From a verdict to a rubric result: the 1-5 criterion scores normalised and weighted.

The result types themselves (`RubricResult`, `JudgeResult`) are part of the stored contract and
live in `evalq.core.results`.
"""

from __future__ import annotations

from collections.abc import Mapping

from evalq.core.results import CriterionScore
from evalq.core.weights import weighted_mean
from evalq.judge.rubrics import Verdict


def normalise(score: int) -> float:
    """Map a 1-5 judge score onto [0, 1] with (x - 1) / 4 (docs/scoring.md; the spec's x / 5 gives
    [0.2, 1])."""
    if not 1 <= score <= 5:
        raise ValueError(f"judge scores are 1-5, got {score}")
    return (score - 1) / 4


def rubric_score(
    verdict: Verdict, weights: Mapping[str, float]
) -> tuple[float | None, dict[str, CriterionScore]]:
    """The weighted mean of the normalised criterion scores, and the per-criterion details.

    Args:
        verdict: the validated answer of one rubric.
        weights: criterion -> weight from the profile (`JudgeProfile`); renormalised by their sum.

    Returns:
        (score, criteria) where criteria maps each criterion to its raw score, normalised score
        and rationale. The score is None only when every weight is zero.
    """
    judgments = verdict.criteria()
    normalised = {name: normalise(judgment.score) for name, judgment in judgments.items()}
    criteria = {
        name: CriterionScore(score=j.score, normalised=normalised[name], rationale=j.rationale)
        for name, j in judgments.items()
    }
    mean = weighted_mean(normalised, weights)
    return mean.value, criteria
