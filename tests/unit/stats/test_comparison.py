"""Paired comparisons, effect size and corrections, checked against scipy and by hand."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evalq.stats.bootstrap import quantile
from evalq.stats.comparison import (
    bootstrap_mean_difference,
    cliffs_delta,
    correct,
    expanded_tail,
    mann_whitney_u,
    mcnemar_exact,
    paired_bootstrap_ci,
    paired_permutation_test,
    resampled_means,
    wilcoxon_signed_rank,
)

# Ten tasks of very different difficulty; B beats A on every one by a small, distinct margin.
TASK_SCORES = [12.0, 25.0, 31.0, 44.0, 52.0, 60.0, 71.0, 79.0, 88.0, 95.0]
MARGINS = [1.1, 1.3, 0.9, 1.7, 0.6, 1.4, 2.0, 0.8, 1.2, 1.5]
A = TASK_SCORES
B = [s + m for s, m in zip(TASK_SCORES, MARGINS, strict=True)]


# -- paired bootstrap ---------------------------------------------------------------------


def test_paired_bootstrap_same_seed_same_result_and_seed_recorded() -> None:
    first = paired_bootstrap_ci(B, A, seed=7, resamples=500)
    assert first == paired_bootstrap_ci(B, A, seed=7, resamples=500)
    assert first.seed == 7 and first.resamples == 500 and first.pairs == 10
    assert paired_bootstrap_ci(B, A, seed=8, resamples=500) != first


def test_paired_bootstrap_mean_and_interval() -> None:
    result = paired_bootstrap_ci(B, A)
    assert result.mean_difference == pytest.approx(sum(MARGINS) / 10)
    assert result.low < result.mean_difference < result.high
    assert min(MARGINS) <= result.low and result.high <= max(MARGINS)


def test_paired_bootstrap_constant_differences_give_a_point_interval() -> None:
    result = paired_bootstrap_ci([3.0, 5.0, 9.0], [1.0, 3.0, 7.0])
    assert (result.mean_difference, result.low, result.high) == pytest.approx((2.0, 2.0, 2.0))


def test_paired_bootstrap_agrees_with_scipy_percentile_bootstrap_at_the_expanded_level() -> None:
    diffs = np.asarray(B) - np.asarray(A)
    ours = paired_bootstrap_ci(B, A, resamples=20000, seed=3)
    # Hesterberg's expanded percentile interval: the plain one at a higher level
    n = len(diffs)
    tail = stats.norm.cdf(-np.sqrt(n / (n - 1)) * stats.t.ppf(0.975, n - 1))
    assert expanded_tail(0.95, n) == pytest.approx(tail) and tail < 0.025
    theirs = stats.bootstrap(
        (diffs,),
        np.mean,
        method="percentile",
        n_resamples=20000,
        confidence_level=1 - 2 * tail,
        rng=np.random.default_rng(3),
    ).confidence_interval
    # Two independent Monte Carlo estimates of the same quantiles.
    assert ours.low == pytest.approx(theirs.low, abs=0.02)
    assert ours.high == pytest.approx(theirs.high, abs=0.02)


def test_paired_bootstrap_rejects_unpaired_input() -> None:
    with pytest.raises(ValueError, match="pair up"):
        paired_bootstrap_ci([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="no pairs"):
        paired_bootstrap_ci([], [])


# -- Wilcoxon and the permutation test ----------------------------------------------------


def test_wilcoxon_exact_small_cases_by_hand() -> None:
    # Five positive differences: only 1 of the 2**5 sign patterns is as extreme on each side.
    all_up = wilcoxon_signed_rank([2.0, 3.0, 4.0, 5.0, 6.0], [1.0, 1.0, 1.0, 1.0, 1.0])
    assert all_up.method == "exact" and all_up.paired
    assert all_up.statistic == 0.0
    assert all_up.p_value == pytest.approx(2 / 32)
    # Differences -1, 2, 3, 4, 5: T- = 1; P(T <= 1) = 2/32 (the empty set and {1}), twice.
    one_down = wilcoxon_signed_rank([0.0, 3.0, 4.0, 5.0, 6.0], [1.0, 1.0, 1.0, 1.0, 1.0])
    assert one_down.statistic == 1.0
    assert one_down.p_value == pytest.approx(4 / 32)


def test_wilcoxon_ties_differences_that_are_equal_in_exact_arithmetic() -> None:
    # 0.75 - 2/3 and 1/3 - 1/4 are both 1/12 but differ in their last bits as floats, as do
    # the two 0.25s; ranked apart they gave p = 0.03125. With the ties, the enumeration of
    # every sign assignment of the mid-ranks gives 0.0625 (issue 25's repro).
    a = [0.25, 0.25, 0, 0.5, 0, 1 / 3, 0.75, 0.75, 1, 0.75, 0]
    b = [1 / 3, 0, 0, 0.25, 0, 0, 2 / 3, 0.75, 0.5, 2 / 3, 0]
    result = wilcoxon_signed_rank(a, b)
    assert (result.method, result.statistic, result.p_value) == ("exact", 2.0, 0.0625)
    assert wilcoxon_signed_rank([0.7, 0.4], [0.6, 0.3]).p_value == 0.5  # one tie of two


def test_wilcoxon_drops_zero_differences_and_reports_all_zero_clearly() -> None:
    with_zero = wilcoxon_signed_rank([2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [1.0] * 5 + [7.0])
    assert with_zero.p_value == pytest.approx(2 / 32)
    assert with_zero.n == 6
    same = wilcoxon_signed_rank([0.5, 0.7, 0.9], [0.5, 0.7, 0.9])
    assert (same.method, same.p_value, same.statistic) == ("no-difference", 1.0, 0.0)


def test_wilcoxon_uses_the_normal_approximation_with_tied_magnitudes_past_16_pairs() -> None:
    a = [float(i) for i in range(20)]
    b = [x - d for x, d in zip(a, [1, 1, 1, 1, -1, 2] * 3 + [1, 1], strict=True)]  # ties
    result = wilcoxon_signed_rank(a, b)
    expected = stats.wilcoxon(np.subtract(a, b), method="approx", correction=True)
    assert result.method == "normal-approximation"
    assert result.p_value == pytest.approx(expected.pvalue)


def _scipy_paired_permutation(a: list[float], b: list[float]) -> float:
    result = stats.permutation_test(
        (a, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        n_resamples=np.inf,
        alternative="two-sided",
    )
    return float(result.pvalue)


def test_exact_permutation_test_matches_scipy() -> None:
    a = [0.9, 0.4, 0.75, 0.6, 0.3, 0.8, 0.55]
    b = [0.7, 0.5, 0.6, 0.35, 0.3, 0.65, 0.6]
    result = paired_permutation_test(a, b)
    assert result.method == "exact" and result.seed is None
    assert result.p_value == pytest.approx(_scipy_paired_permutation(a, b))
    assert paired_permutation_test(B, A).p_value == pytest.approx(2 / 1024)


def test_permutation_test_monte_carlo_above_sixteen_pairs_is_seeded() -> None:
    rng = np.random.default_rng(5)
    a = list(rng.normal(0.5, 0.2, 20))
    b = [x - 0.08 + float(e) for x, e in zip(a, rng.normal(0, 0.15, 20), strict=True)]
    result = paired_permutation_test(a, b, resamples=20000, seed=11)
    assert result.method == "monte-carlo" and result.seed == 11
    assert result == paired_permutation_test(a, b, resamples=20000, seed=11)
    theirs = stats.permutation_test(
        (a, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        n_resamples=20000,
        rng=np.random.default_rng(0),
    )
    assert result.p_value == pytest.approx(theirs.pvalue, abs=0.02)


def test_permutation_test_all_zero_differences() -> None:
    result = paired_permutation_test([1.0, 2.0], [1.0, 2.0])
    assert (result.method, result.p_value) == ("no-difference", 1.0)


def test_paired_test_finds_what_the_unpaired_test_misses() -> None:
    unpaired = mann_whitney_u(B, A)
    paired = wilcoxon_signed_rank(B, A)
    assert not unpaired.paired and "unpaired" in unpaired.test
    assert unpaired.p_value > 0.05
    assert paired.p_value < 0.05
    assert paired.p_value == pytest.approx(2 / 1024)  # all ten differences positive


# -- McNemar ------------------------------------------------------------------------------


def test_mcnemar_on_a_two_by_two_table_matches_the_binomial_test() -> None:
    # both pass 10, only A passes 2, only B passes 9, both fail 5
    table = [(True, True)] * 10 + [(True, False)] * 2 + [(False, True)] * 9 + [(False, False)] * 5
    result = mcnemar_exact([x for x, _ in table], [y for _, y in table])
    assert (result.statistic, result.n, result.method) == (2.0, 11, "exact")
    assert result.p_value == pytest.approx(stats.binomtest(2, 11, 0.5).pvalue)
    # by hand: 2 * (1 + 11 + 55) / 2**11
    assert result.p_value == pytest.approx(2 * 67 / 2048)


def test_mcnemar_without_discordant_pairs() -> None:
    result = mcnemar_exact([True, False], [True, False])
    assert (result.method, result.p_value, result.n) == ("no-difference", 1.0, 0)


# -- Cliff's delta and Mann-Whitney -------------------------------------------------------


def test_cliffs_delta_at_its_extremes_and_zero() -> None:
    assert cliffs_delta([5.0, 6.0, 7.0], [1.0, 2.0]).delta == 1.0
    assert cliffs_delta([1.0, 2.0], [5.0, 6.0, 7.0]).delta == -1.0
    assert cliffs_delta([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]).delta == 0.0
    top = cliffs_delta([5.0, 6.0, 7.0], [1.0, 2.0])
    assert (top.low, top.high) == (1.0, 1.0)


def test_cliffs_delta_by_hand_and_against_mann_whitney_u() -> None:
    x, y = [1.0, 3.0, 5.0, 5.0], [2.0, 5.0, 4.0]
    # pairs x > y: 3>2, 5>2, 5>4, 5>2, 5>4 = 5; x < y: 1<2, 1<5, 1<4, 3<5, 3<4 = 5; ties 2
    result = cliffs_delta(x, y, seed=4, resamples=300)
    assert result.delta == pytest.approx(0.0)
    u = stats.mannwhitneyu(x, y).statistic
    assert result.delta == pytest.approx(2 * u / (len(x) * len(y)) - 1)
    assert result.low <= result.delta <= result.high
    assert result == cliffs_delta(x, y, seed=4, resamples=300)
    assert cliffs_delta(B, A).delta == pytest.approx(
        2 * stats.mannwhitneyu(B, A).statistic / 100 - 1
    )


def test_mann_whitney_matches_scipy() -> None:
    x, y = [0.2, 0.5, 0.9, 0.4], [0.1, 0.3, 0.35]
    result = mann_whitney_u(x, y)
    expected = stats.mannwhitneyu(x, y, alternative="two-sided", method="exact")
    assert result.method == "exact"
    assert (result.statistic, result.p_value) == pytest.approx(
        (expected.statistic, expected.pvalue)
    )


# -- corrections --------------------------------------------------------------------------


def test_holm_changes_a_decision_and_matches_hand_values() -> None:
    p = [0.03, 0.01, 0.04, 0.02]
    uncorrected = correct(p, correction="none")
    assert all(uncorrected.rejected)
    holm = correct(p)
    assert holm.correction == "holm"
    # sorted 0.01, 0.02, 0.03, 0.04 times 4, 3, 2, 1 = 0.04, 0.06, 0.06, 0.04 -> monotone
    assert holm.adjusted == pytest.approx((0.06, 0.04, 0.06, 0.06))
    assert holm.rejected == (False, True, False, False)


def test_holm_caps_at_one() -> None:
    assert correct([0.5, 0.6]).adjusted == pytest.approx((1.0, 1.0))


def test_benjamini_hochberg_by_hand_and_against_scipy() -> None:
    bh = correct([0.03, 0.01, 0.04, 0.02], correction="benjamini-hochberg")
    assert bh.correction == "benjamini-hochberg"
    # 0.01*4/1, 0.02*4/2, 0.03*4/3, 0.04*4/4 all 0.04
    assert bh.adjusted == pytest.approx((0.04,) * 4)
    assert all(bh.rejected)
    p = [0.001, 0.2, 0.012, 0.049, 0.03, 0.8, 0.04]
    ours = correct(p, correction="benjamini-hochberg")
    assert ours.adjusted == pytest.approx(tuple(stats.false_discovery_control(p, method="bh")))


def test_correct_empty_family() -> None:
    assert correct([]).adjusted == ()


def test_wilcoxon_with_tied_magnitudes_is_exact_and_matches_scipy_s_permutation() -> None:
    a = [3.0, 1.0, 2.0, 2.0, 5.0, 1.0, 4.0]
    b = [1.0, 2.0, 0.0, 1.0, 3.0, 0.0, 2.0]  # differences 2, -1, 2, 1, 2, 1, 2: ties
    ours = wilcoxon_signed_rank(a, b)
    theirs = stats.wilcoxon(
        [x - y for x, y in zip(a, b, strict=True)], method=stats.PermutationMethod(n_resamples=9999)
    )
    assert ours.method == "exact"
    assert ours.p_value == pytest.approx(float(theirs.pvalue))  # 7 pairs: scipy enumerates too
    assert ours.statistic == pytest.approx(float(theirs.statistic))


def test_cliffs_delta_by_sorting_equals_the_pairwise_count() -> None:
    rng = np.random.default_rng(5)
    x = list(rng.integers(0, 6, 40).astype(float))  # many ties
    y = list(rng.integers(0, 6, 33).astype(float))
    brute = sum(int(xi > yj) - int(xi < yj) for xi in x for yj in y) / (len(x) * len(y))
    assert cliffs_delta(x, y, resamples=10).delta == pytest.approx(brute)


def test_resamples_are_drawn_in_blocks_that_cover_them_all_and_stay_bounded() -> None:
    from evalq.stats.comparison import BLOCK_VALUES, _blocks, resampled_means

    for resamples, size in [(2000, 10), (2000, 1000), (3, 5_000_000), (1, 1)]:
        blocks = _blocks(resamples, size)
        assert sum(blocks) == resamples
        assert all(rows * size <= max(BLOCK_VALUES, size) for rows in blocks)
    means = resampled_means(np.array([1.0, 3.0]), np.random.default_rng(0), 1000)
    assert len(means) == 1000 and set(np.unique(means)) <= {1.0, 2.0, 3.0}


def test_a_monte_carlo_permutation_p_value_is_seeded_and_counts_the_observed_draw() -> None:
    a = [float(i) for i in range(20)]
    b = [x - 0.5 for x in a]  # 20 identical positive differences: only 2 of 2**20 flips tie
    result = paired_permutation_test(a, b, resamples=999, seed=4)
    assert result.method == "monte-carlo" and result.seed == 4
    assert result == paired_permutation_test(a, b, resamples=999, seed=4)
    assert result.p_value == pytest.approx(1 / 1000)  # (1 + 0 hits) / (1 + 999)


def test_unpaired_intervals_are_expanded_at_the_smaller_sample_s_size() -> None:
    # The plain percentile interval covers 85-91% at 5-12 values (bench/interval_coverage.py);
    # evalq reads the same resampled differences at expanded_tail(level, min(n, m)).
    x, y = [0.2, 0.5, 0.9, 0.4, 0.7], [0.1, 0.6, 0.3, 0.8, 0.5, 0.2, 0.4]
    rng = np.random.default_rng(2)
    after = resampled_means(np.asarray(x), rng, 4000)
    drawn = sorted((after - resampled_means(np.asarray(y), rng, 4000)).tolist())
    difference = bootstrap_mean_difference(x, y, resamples=4000, seed=2)
    tail = expanded_tail(0.95, 5)
    assert difference.low == pytest.approx(quantile(drawn, tail))
    assert difference.high == pytest.approx(quantile(drawn, 1 - tail))
    assert difference.low < quantile(drawn, 0.025) and difference.high > quantile(drawn, 0.975)
