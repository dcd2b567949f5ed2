"""Normalisation (x-1)/4 and the weighted rubric scores (spec 001 tier 2, docs/scoring.md)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalq.core.profile import load_profile
from evalq.core.results import CriterionScore
from evalq.judge.outcome import normalise, rubric_score
from evalq.judge.rubrics import (
    ConstructivenessVerdict,
    Criterion,
    PlanningRationalityVerdict,
    TechnicalAccuracyVerdict,
    Verdict,
)

JUDGE = load_profile().judge
scores = st.sampled_from([1, 2, 3, 4, 5])


def verdict(kind: type[Verdict], values: list[int]) -> Verdict:
    names = list(kind.model_fields)
    return kind(
        **{n: Criterion(score=v, rationale="r") for n, v in zip(names, values, strict=True)}
    )


def test_normalise_maps_1_to_5_onto_0_to_1() -> None:
    # (x - 1) / 4: 1 -> 0, 2 -> .25, 3 -> .5, 4 -> .75, 5 -> 1 (the spec's x/5 would give .2 for 1)
    assert [normalise(x) for x in (1, 2, 3, 4, 5)] == [0.0, 0.25, 0.5, 0.75, 1.0]


@pytest.mark.parametrize("bad", [0, 6, -1])
def test_normalise_rejects_scores_outside_1_to_5(bad: int) -> None:
    with pytest.raises(ValueError, match="1-5"):
        normalise(bad)


def test_technical_accuracy_weights_5_3_2() -> None:
    # factual 5 -> 1.0, methodology 3 -> 0.5, domain 1 -> 0.0
    # (0.5*1.0 + 0.3*0.5 + 0.2*0.0) / (0.5+0.3+0.2) = 0.65
    score, criteria = rubric_score(
        verdict(TechnicalAccuracyVerdict, [5, 3, 1]), JUDGE.technical_accuracy.weights
    )
    assert score == pytest.approx(0.65)
    assert criteria["methodology_understanding"] == CriterionScore(
        score=3, normalised=0.5, rationale="r"
    )


def test_constructiveness_is_the_plain_mean() -> None:
    # 4, 2, 5 -> 0.75, 0.25, 1.0; equal weights: (0.75 + 0.25 + 1.0) / 3 = 2/3
    score, _ = rubric_score(
        verdict(ConstructivenessVerdict, [4, 2, 5]), JUDGE.constructiveness.weights
    )
    assert score == pytest.approx(2 / 3)


def test_planning_rationality_weights_decision_quality_most() -> None:
    # logical 2 -> .25, decision 4 -> .75, resource 3 -> .5: .3*.25 + .5*.75 + .2*.5 = 0.55
    score, _ = rubric_score(
        verdict(PlanningRationalityVerdict, [2, 4, 3]), JUDGE.planning_rationality.weights
    )
    assert score == pytest.approx(0.55)


def test_weights_come_from_the_profile_not_the_code() -> None:
    # all weight on domain_knowledge (score 1 -> 0.0) makes the rubric score 0.0
    score, _ = rubric_score(verdict(TechnicalAccuracyVerdict, [5, 5, 1]), {"domain_knowledge": 1.0})
    assert score == 0.0


@given(st.lists(scores, min_size=3, max_size=3))
def test_rubric_scores_stay_in_0_1(values: list[int]) -> None:
    for kind, weights in (
        (TechnicalAccuracyVerdict, JUDGE.technical_accuracy.weights),
        (ConstructivenessVerdict, JUDGE.constructiveness.weights),
        (PlanningRationalityVerdict, JUDGE.planning_rationality.weights),
    ):
        score, _ = rubric_score(verdict(kind, values), weights)
        assert score is not None and 0.0 <= score <= 1.0


@given(st.lists(scores, min_size=3, max_size=3), st.integers(0, 2))
def test_raising_one_criterion_never_lowers_the_score(values: list[int], which: int) -> None:
    weights = JUDGE.technical_accuracy.weights
    before, _ = rubric_score(verdict(TechnicalAccuracyVerdict, values), weights)
    raised = list(values)
    raised[which] = min(5, raised[which] + 1)
    after, _ = rubric_score(verdict(TechnicalAccuracyVerdict, raised), weights)
    assert before is not None and after is not None and after >= before
    if raised[which] != values[which]:
        assert after > before
