"""The permutation tests of a mean difference and their inverted intervals: one answer.

Checked against brute force (every sign flip or split re-run at each shift) and, as a property
over random data, the rule the verdicts rest on: the interval excludes 0 exactly when the test
rejects at the level it was drawn at, in `evalq.stats.permutation`, in the permutation test of
Welch's t (`evalq.stats.studentised`) and in every comparison `evalq.stats.contrast` makes
(whatever the correction).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalq.stats.comparison import correct
from evalq.stats.contrast import Observation, contrast
from evalq.stats.permutation import sign_flip_null, two_sample_null
from evalq.stats.studentised import welch_null


def _sign_flip_p(d: list[float]) -> float:
    observed = abs(math.fsum(d))
    hits = sum(
        abs(math.fsum(s * x for s, x in zip(signs, d, strict=True))) >= observed - 1e-9
        for signs in itertools.product((1, -1), repeat=len(d))
    )
    return hits / 2 ** len(d)


def _split_p(x: list[float], y: list[float]) -> float:
    pooled, n = x + y, len(x)
    observed = abs(np.mean(x) - np.mean(y))
    hits = total = 0
    for chosen in itertools.combinations(range(len(pooled)), n):
        a = [pooled[i] for i in chosen]
        b = [pooled[i] for i in range(len(pooled)) if i not in chosen]
        hits += abs(np.mean(a) - np.mean(b)) >= observed - 1e-9
        total += 1
    return hits / total


def test_the_sign_flip_interval_is_every_shift_the_test_keeps() -> None:
    d = [0.3, 0.1, -0.05, 0.4, 0.25, 0.2, 0.15]
    null = sign_flip_null(d, resamples=1, seed=0)
    assert null.p_value() == pytest.approx(_sign_flip_p(d))
    low, high = null.interval(0.05)
    for shift in np.linspace(low - 0.2, high + 0.2, 81):
        if min(abs(shift - low), abs(shift - high)) < 1e-9:
            continue
        kept = _sign_flip_p([x - shift for x in d]) > 0.05
        assert kept == (low <= shift <= high), shift


def test_the_two_sample_interval_is_every_shift_the_test_keeps() -> None:
    x, y = [0.9, 0.7, 0.8, 0.95, 0.6], [0.5, 0.65, 0.4, 0.7, 0.55, 0.3]
    null = two_sample_null(x, y, resamples=1, seed=0)
    assert null.p_value() == pytest.approx(_split_p(x, y))
    low, high = null.interval(0.05)
    assert 0 < low < null.estimate < high
    for shift in np.linspace(low - 0.2, high + 0.2, 41):
        if min(abs(shift - low), abs(shift - high)) < 1e-9:
            continue
        kept = _split_p([v - shift for v in x], y) > 0.05
        assert kept == (low <= shift <= high), shift


def test_too_few_values_to_reject_give_the_whole_scale_not_a_false_bound() -> None:
    # five pairs: the smallest two-sided p-value is 2 / 32 > 0.05, so nothing is excluded
    null = sign_flip_null([0.2, 0.3, 0.4, 0.5, 0.6], resamples=1, seed=0)
    assert null.p_value() == pytest.approx(2 / 32)
    assert null.interval(0.05, bounds=(-1.0, 1.0)) == (-1.0, 1.0)
    assert null.interval(0.07, bounds=(-1.0, 1.0))[0] > 0


def test_monte_carlo_nulls_are_seeded_and_count_the_observed() -> None:
    rng = np.random.default_rng(3)
    d = rng.normal(0.1, 0.2, 30).tolist()
    one = sign_flip_null(d, resamples=500, seed=7)
    assert (
        one.method == "monte-carlo"
        and one.p_value() == sign_flip_null(d, resamples=500, seed=7).p_value()
    )
    assert one.p_value() >= 1 / 501
    x, y = rng.random(15).tolist(), rng.random(15).tolist()
    two = two_sample_null(x, y, resamples=500, seed=7)
    assert two.method == "monte-carlo"
    low, high = two.interval(0.05)
    assert (low > 0 or high < 0) == (two.p_value() <= 0.05)


scores = st.lists(
    st.one_of(
        st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]),
        st.floats(0, 1, allow_nan=False).map(lambda v: round(v, 3)),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=200, deadline=None)
@given(scores, scores, st.sampled_from([0.005, 0.01, 0.025, 0.05, 0.1, 0.3]))
def test_interval_and_verdict_agree_for_any_data_and_level(
    a: list[float], b: list[float], threshold: float
) -> None:
    n = min(len(a), len(b))
    for null in (
        sign_flip_null([x - y for x, y in zip(a[:n], b[:n], strict=True)], resamples=300, seed=1),
        two_sample_null(a, b, resamples=300, seed=1),
        welch_null(a, b, resamples=300, seed=1),
    ):
        low, high = null.interval(threshold, bounds=(-1.0, 1.0))
        assert low <= null.estimate + 1e-12 and null.estimate - 1e-12 <= high
        assert (low > 0 or high < 0) == (null.p_value() <= threshold)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(scores, scores), min_size=1, max_size=4),
    st.sampled_from(["holm", "benjamini-hochberg", "none"]),
    st.booleans(),
)
def test_every_comparison_s_interval_agrees_with_its_corrected_verdict(
    samples: list[tuple[list[float], list[float]]], correction: str, paired: bool
) -> None:
    """Reference R against groups G0..: paired over shared units, or unpaired on one unit."""
    observations = []
    for g, (ref, other) in enumerate(samples):
        if paired:
            n = min(len(ref), len(other))
            observations += [Observation(f"u{i}", "R", v) for i, v in enumerate(ref[:n])]
            observations += [Observation(f"u{i}", f"G{g}", v) for i, v in enumerate(other[:n])]
        else:
            observations += [Observation("u", "R", v) for v in ref if g == 0]
            observations += [Observation("u", f"G{g}", v) for v in other]
    if paired:  # one reference value per unit
        seen: dict[str, float] = {}
        observations = [
            o for o in observations if o.group != "R" or seen.setdefault(o.unit, o.score) == o.score
        ]
    groups = ["R", *(f"G{g}" for g in range(len(samples)))]
    found = contrast(observations, groups, correction=correction, resamples=200)  # type: ignore[arg-type]
    for c in found.comparisons:
        if c.difference is None:
            assert c.test is None and not c.rejected
            continue
        excluded = c.difference.low > 0 or c.difference.high < 0
        assert excluded == c.rejected, (c.difference, c.adjusted_p, found.interval_level)
        if c.rejected:
            assert ("higher" in c.conclusion) == (c.difference.mean_difference > 0)


def test_each_correction_is_a_threshold_on_the_raw_p_values() -> None:
    p = [0.01, 0.02, 0.03, 0.04, 0.2]
    for correction in ("holm", "benjamini-hochberg", "none"):
        found = correct(p, correction=correction)  # type: ignore[arg-type]
        assert [q <= found.threshold for q in p] == list(found.rejected)
    # Holm rejects 0.01 (<= 0.05 / 5) and stops at 0.02 (> 0.05 / 4): one rejection
    assert correct(p, correction="holm").threshold == pytest.approx(0.05 / 4)
    assert correct(p, correction="benjamini-hochberg").threshold == pytest.approx(0.05 * 4 / 5)


def test_a_caller_s_threshold_draws_the_interval_at_its_level() -> None:
    """The gate corrects each task's p-value with the other tasks' and redraws the task's
    interval at that family's threshold: it then excludes 0 exactly when p <= threshold."""
    ref = [Observation("t", "A", v) for v in (0.1, 0.2, 0.3, 0.35, 0.4, 0.45)]
    other = [Observation("t", "B", v) for v in (0.3, 0.4, 0.5, 0.55, 0.6, 0.7)]
    alone = contrast(ref + other, ["A", "B"], resamples=200)
    (c,) = alone.comparisons
    assert c.test is not None and 0.001 < c.test.p_value <= 0.05 and c.rejected
    assert c.difference is not None and c.difference.low > 0  # at 95%
    strict = contrast(ref + other, ["A", "B"], resamples=200, threshold=c.test.p_value / 2)
    (d,) = strict.comparisons
    assert strict.interval_level == pytest.approx(1 - c.test.p_value / 2)
    assert d.difference is not None and d.difference.low <= 0 <= d.difference.high
