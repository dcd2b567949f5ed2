"""Tier 1 result: best-of-references metrics, time normalisation, task success, tier score."""

from __future__ import annotations

import math
import os
from collections.abc import Iterator

os.environ["HF_HUB_OFFLINE"] = "1"

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalq.core.profile import TextProfile
from evalq.metrics.semantic import SemanticScorer
from evalq.metrics.similarity import jaccard, tfidf_cosine
from evalq.metrics.text import (
    TextMetrics,
    normalise_time,
    overall_similarity,
    task_success,
    text_metrics,
    tier1_score,
)

PROFILE = TextProfile(success_ramp=0.0)  # the spec's step (the ramp: test_calibration.py)
IDF_ONE = math.log(1.5) + 1  # smooth idf of a term in one of two documents

unit = st.floats(0, 1, allow_nan=False)
maybe_unit = st.none() | unit
seconds = st.floats(0, 1e9, allow_nan=False, allow_infinity=False)


@pytest.fixture(scope="module")
def scorer() -> Iterator[SemanticScorer]:
    yield SemanticScorer.from_profile(PROFILE)


def metrics(
    semantic: float | None, cosine: float | None, jaccard: float | None, references: int = 1
) -> TextMetrics:
    return TextMetrics(cosine=cosine, jaccard=jaccard, semantic=semantic, references=references)


def test_no_references_means_not_applicable(scorer: SemanticScorer) -> None:
    result = text_metrics("some output", [], profile=PROFILE, semantic=scorer)
    assert result == TextMetrics(cosine=None, jaccard=None, semantic=None, references=0)
    assert overall_similarity(result, PROFILE) is None
    assert task_success(result, PROFILE) is None
    assert tier1_score(result, None, PROFILE).value is None


def test_best_reference_per_metric_without_semantic() -> None:
    output = "the cat sat on the mat"
    # jaccard: {the,cat,sat,on,mat} vs {the,cat,sat} 3/5; vs {on,the,mat,today} 3/6
    references = ["The cat sat", "on the mat today"]
    result = text_metrics(output, references, profile=PROFILE, semantic=None)
    assert result.jaccard == pytest.approx(3 / 5)
    assert result.cosine == max(tfidf_cosine(output, r) for r in references)
    assert result.semantic is None
    assert result.references == 2


def test_each_metric_takes_its_own_best_reference() -> None:
    output = "alpha beta gamma"
    # r1 repeats all three words and adds two: jaccard 3/5 but term frequencies close to the
    # output's, so the higher cosine (.818 vs .657); r2 = "alpha beta": jaccard 2/3.
    r1, r2 = "alpha beta gamma alpha beta gamma zeta eta", "alpha beta"
    result = text_metrics(output, [r1, r2], profile=PROFILE, semantic=None)
    assert result.jaccard == pytest.approx(2 / 3) == jaccard(output, r2)
    assert result.cosine == tfidf_cosine(output, r1)
    assert tfidf_cosine(output, r1) > tfidf_cosine(output, r2)


def test_profile_controls_the_vectorizer() -> None:
    # "the" is a stop word by default: no shared term. Kept with unigrams: cos = 1 / (1 + a^2)
    assert text_metrics("the cat", ["the dog"], profile=PROFILE, semantic=None).cosine == 0.0
    kept = TextProfile(stop_words=None, ngram_range=(1, 1))
    value = text_metrics("the cat", ["the dog"], profile=kept, semantic=None).cosine
    assert value == pytest.approx(1 / (1 + IDF_ONE**2))


def test_semantic_is_the_best_over_references(scorer: SemanticScorer) -> None:
    output = "The proposed attention mechanism cuts memory use in transformers."
    references = [
        "Preheat the oven and bake the bread.",
        "A new attention method lowers the memory cost of transformer models.",
    ]
    result = text_metrics(output, references, profile=PROFILE, semantic=scorer)
    assert result.semantic == max(scorer.score(output, references))
    assert result.semantic == scorer.score(output, references[1:])[0]


def test_semantic_runs_in_the_profile_precision(scorer: SemanticScorer) -> None:
    output, references = "The method is sound but the evaluation is thin.", ["Sound, thin eval."]
    bf16 = text_metrics(output, references, profile=TextProfile(precision="bf16"), semantic=scorer)
    assert bf16.semantic == scorer.score(output, references, precision="bf16")[0]
    fp32 = text_metrics(output, references, profile=PROFILE, semantic=scorer)
    assert fp32.semantic == scorer.score(output, references)[0]
    assert bf16.semantic != fp32.semantic


def test_normalise_time_hand_computed() -> None:
    assert normalise_time(0) == 1.0
    assert normalise_time(math.e - 1) == pytest.approx(0.5)  # 1 / (1 + ln e)
    assert normalise_time(math.e**2 - 1) == pytest.approx(1 / 3)  # 1 / (1 + 2)
    # the spec's 1 / (1 + log t) would be negative here and divide by zero at t = 1/e
    assert 0 < normalise_time(0.2) < 1
    assert normalise_time(1 / math.e) == pytest.approx(1 / (1 + math.log(1 + 1 / math.e)))


@pytest.mark.parametrize("bad", [-0.001, -5.0, math.nan, math.inf])
def test_normalise_time_rejects(bad: float) -> None:
    with pytest.raises(ValueError, match="execution time"):
        normalise_time(bad)


@given(seconds, seconds)
def test_normalise_time_range_and_monotone(a: float, b: float) -> None:
    low, high = sorted((a, b))
    assert 0 < normalise_time(high) <= normalise_time(low) <= 1
    if high >= 2 * low + 1e-6:  # a clear gap: strictly smaller
        assert normalise_time(high) < normalise_time(low)


def test_overall_similarity_and_task_success_hand_computed() -> None:
    # .5 * .9 + .3 * .6 + .2 * .5 = .73 < .8
    below = metrics(semantic=0.9, cosine=0.6, jaccard=0.5)
    assert overall_similarity(below, PROFILE) == pytest.approx(0.73)
    assert task_success(below, PROFILE) == 0.0
    # .5 * .95 + .3 * .8 + .2 * .6 = .835 >= .8
    above = metrics(semantic=0.95, cosine=0.8, jaccard=0.6)
    assert overall_similarity(above, PROFILE) == pytest.approx(0.835)
    assert task_success(above, PROFILE) == 1.0


def test_task_success_threshold_is_inclusive_and_from_the_profile() -> None:
    # all .5: overall .25 + .15 + .1 = .5 exactly
    half = metrics(semantic=0.5, cosine=0.5, jaccard=0.5)
    assert task_success(half, TextProfile(success_threshold=0.5, success_ramp=0.0)) == 1.0
    assert task_success(half, TextProfile(success_threshold=0.51, success_ramp=0.0)) == 0.0


def test_overall_without_semantic_renormalises() -> None:
    # (.3 * .6 + .2 * .5) / (.3 + .2) = .28 / .5 = .56
    assert overall_similarity(metrics(None, 0.6, 0.5), PROFILE) == pytest.approx(0.56)


def test_tier1_score_hand_computed() -> None:
    m = metrics(semantic=0.9, cosine=0.6, jaccard=0.5)
    # time e-1 s normalises to .5: .4 * .9 + .3 * .6 + .2 * .5 + .1 * .5 = .69
    score = tier1_score(m, math.e - 1, PROFILE)
    assert score.value == pytest.approx(0.69)
    assert set(score.used) == {"semantic", "cosine", "jaccard", "time_taken"}
    assert score.missing == ()
    # no time: (.36 + .18 + .10) / .9 = .7111, time named as missing
    untimed = tier1_score(m, None, PROFILE)
    assert untimed.value == pytest.approx(0.64 / 0.9)
    assert untimed.missing == ("time_taken",)


def test_tier1_weights_come_from_the_profile() -> None:
    m = metrics(semantic=0.9, cosine=0.6, jaccard=0.5)
    assert tier1_score(m, 10.0, TextProfile(tier_weights={"cosine": 1.0})).value == 0.6
    # a weight of zero never counts
    weights = {"semantic": 1.0, "cosine": 0.0, "jaccard": 0.0, "time_taken": 0.0}
    assert tier1_score(m, None, TextProfile(tier_weights=weights)).value == 0.9


@given(maybe_unit, maybe_unit, maybe_unit, st.none() | seconds)
def test_scores_stay_in_unit_range(
    semantic: float | None, cosine: float | None, jac: float | None, time: float | None
) -> None:
    m = metrics(semantic, cosine, jac)
    overall = overall_similarity(m, PROFILE)
    score = tier1_score(m, time, PROFILE).value
    if semantic is None and cosine is None and jac is None:
        assert overall is None
        assert task_success(m, PROFILE) is None
    else:
        assert overall is not None
        assert 0 <= overall <= 1 + 1e-12
        assert task_success(m, PROFILE) in (0.0, 1.0)
    if score is not None:
        assert 0 <= score <= 1 + 1e-12
    assert (score is None) == (semantic is None and cosine is None and jac is None and time is None)


@given(unit, unit, unit, seconds, seconds)
def test_tier1_score_is_not_increasing_in_time(
    semantic: float, cosine: float, jac: float, a: float, b: float
) -> None:
    m = metrics(semantic, cosine, jac)
    fast, slow = sorted((a, b))
    fast_score = tier1_score(m, fast, PROFILE).value
    slow_score = tier1_score(m, slow, PROFILE).value
    assert fast_score is not None and slow_score is not None
    assert slow_score <= fast_score + 1e-12


def test_task_success_reaches_its_threshold_within_the_rounding_tolerance() -> None:
    # 0.5 x 0.98 + 0.3 x 0.6 + 0.2 x 0.65 is 0.8, but 0.7999999999999999 in floating point
    metrics = TextMetrics(cosine=0.6, jaccard=0.65, semantic=0.98, references=1)
    overall = overall_similarity(metrics, PROFILE)
    assert overall is not None and overall < PROFILE.success_threshold
    assert task_success(metrics, PROFILE) == 1.0
    below = TextMetrics(cosine=0.79, jaccard=0.79, semantic=0.79, references=1)
    assert task_success(below, PROFILE) == 0.0
