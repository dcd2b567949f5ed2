"""Groups compared over the units they share: paired where they pair, unpaired (labelled)
where they do not, corrected together."""

from __future__ import annotations

import pytest
from scipy.stats import wilcoxon

from evalq.stats.comparison import cliffs_delta, correct, mcnemar_exact
from evalq.stats.contrast import MIN_PAIRS, Observation, contrast, smallest_p, unit_values

# Ten tasks of very different difficulty; B beats A on each by 0.6 to 2 points (as in
# test_comparison's paired design, where Mann-Whitney misses it and Wilcoxon finds it).
TASK_LEVELS = [12.0, 20.0, 31.0, 40.0, 47.0, 55.0, 63.0, 71.0, 84.0, 95.0]
GAINS = [0.6, 0.8, 1.0, 1.1, 1.2, 1.4, 1.5, 1.7, 1.8, 2.0]


def tasks(gains: list[float] = GAINS) -> list[Observation]:
    observations = []
    for i, (level, gain) in enumerate(zip(TASK_LEVELS, gains, strict=True)):
        observations += [Observation(f"t{i}", "A", level), Observation(f"t{i}", "B", level + gain)]
    return observations


def test_pairs_over_shared_tasks_find_what_the_spread_between_tasks_hides() -> None:
    result = contrast(tasks(), ["A", "B"], resamples=500)
    (b,) = result.comparisons
    assert b.test is not None and b.difference is not None and b.effect is not None
    assert (b.design, b.pairs, b.test.test) == ("paired", 10, "paired-permutation")
    assert b.test.p_value == pytest.approx(2 / 1024)  # every gain positive: 2 of 2**10 flips
    assert b.rejected and b.conclusion.startswith("B scores higher than A")
    assert b.difference.mean_difference == pytest.approx(sum(GAINS) / 10)
    assert 0 < b.difference.low <= b.difference.high
    expected = wilcoxon(GAINS, method="exact").pvalue  # the secondary figure
    assert b.signed_rank is not None and b.signed_rank.p_value == pytest.approx(expected)
    assert b.mcnemar is None  # no pass/fail outcomes
    # Cliff's delta compares the two sets of task values: close to 0, the tasks dominate
    assert abs(b.effect.delta) < 0.2


def test_a_group_s_value_on_a_unit_is_the_mean_of_its_observations() -> None:
    units = unit_values(
        [Observation("t", "A", 1.0), Observation("t", "A", 3.0), Observation("t", "B", 5.0)]
    )
    assert units[0].values == {"A": 2.0, "B": 5.0}


def test_one_shared_task_falls_back_to_an_unpaired_test_and_says_so() -> None:
    runs = [Observation("t", "T0", v) for v in (0.1, 0.2, 0.3, 0.4, 0.5)]
    runs += [Observation("t", "T1", v) for v in (0.6, 0.7, 0.8, 0.9, 1.0)]
    (c,) = contrast(runs, ["T0", "T1"], resamples=300).comparisons
    assert c.test is not None and c.difference is not None and c.effect is not None
    assert (c.design, c.pairs, c.n_reference, c.n_other) == ("unpaired", 0, 5, 5)
    assert c.test.test == "permutation (unpaired)" and not c.test.paired
    assert c.test.p_value == pytest.approx(2 / 252)  # all 5 above all 5: 2 / C(10, 5)
    assert c.difference.method == "inverted permutation test" and c.difference.low > 0
    assert c.effect.delta == 1.0 and c.signed_rank is None
    assert c.difference.mean_difference == pytest.approx(0.5) and c.difference.pairs == 0
    assert any("unpaired" in note for note in c.notes)


def test_mcnemar_runs_on_single_pass_fail_outcomes_per_side() -> None:
    # 8 scenarios: A passes the first six, B only the sixth: A alone passed 5 times, B never
    a = [True, True, True, True, True, True, False, False]
    b = [False, False, False, False, False, True, False, False]
    observations = []
    for i, (pa, pb) in enumerate(zip(a, b, strict=True)):
        observations += [
            Observation(f"s{i}", "A", float(pa), pa),
            Observation(f"s{i}", "B", float(pb), pb),
        ]
    (c,) = contrast(observations, ["A", "B"], resamples=100).comparisons
    assert c.mcnemar == mcnemar_exact(b, a)  # other first: B's passes against A's
    assert c.mcnemar is not None and c.mcnemar.n == 5  # discordant: A alone passed 5 times
    assert c.mcnemar.p_value == pytest.approx(2 / 32)  # two-sided binomial tail, 2 * 1 / 2**5


def test_mixed_outcomes_on_a_unit_leave_mcnemar_out_with_a_note() -> None:
    observations = [
        Observation("s0", "A", 1.0, True),
        Observation("s0", "A", 0.0, False),
        Observation("s0", "B", 1.0, True),
    ]
    for i in range(1, MIN_PAIRS):
        observations += [
            Observation(f"s{i}", "A", 1.0, True),
            Observation(f"s{i}", "B", 0.0, False),
        ]
    (c,) = contrast(observations, ["A", "B"], resamples=100).comparisons
    assert c.mcnemar is None and any("McNemar not run" in note for note in c.notes)


def test_several_groups_are_corrected_together_and_the_correction_is_named() -> None:
    observations = tasks()
    observations += [Observation(f"t{i}", "C", lv + 0.5) for i, lv in enumerate(TASK_LEVELS)]
    observations += [Observation(f"t{i}", "D", lv + (-1) ** i) for i, lv in enumerate(TASK_LEVELS)]
    for name in ("holm", "benjamini-hochberg"):
        result = contrast(observations, ["A", "B", "C", "D"], correction=name, resamples=200)
        raw = [c.test.p_value for c in result.comparisons]
        assert result.correction == name
        assert [c.adjusted_p for c in result.comparisons] == list(
            correct(raw, correction=name).adjusted
        )
    holm = contrast(observations, ["A", "B", "C", "D"], resamples=200)
    assert [c.other for c in holm.comparisons] == ["B", "C", "D"]
    assert not holm.comparisons[2].rejected  # D alternates around A: nothing to find


def test_few_pairs_are_flagged_as_unable_to_reach_significance() -> None:
    assert smallest_p(3) == 0.25 and smallest_p(6) == pytest.approx(1 / 32)
    (c,) = contrast(tasks()[:10], ["A", "B"], resamples=100).comparisons  # 5 tasks
    assert c.pairs == 5 and not c.rejected
    assert any("smallest possible two-sided p-value is 0.0625" in n for n in c.notes)


@pytest.mark.parametrize("pairs", [2, 3, 4])
def test_below_the_minimum_of_pairs_there_is_no_interval_and_no_verdict(pairs: int) -> None:
    # B is ahead on every task: at 2-4 pairs a "95%" interval covers as little as 51-83% of the time
    # (bench/interval_coverage.py), so nothing is shown but the words.
    (c,) = contrast(tasks()[: 2 * pairs], ["A", "B"], resamples=100).comparisons
    assert MIN_PAIRS == 5
    assert (c.design, c.pairs) == ("too few", pairs)
    assert c.difference is None and c.test is None and c.effect is None
    assert c.signed_rank is None and c.mcnemar is None
    assert c.adjusted_p is None and not c.rejected
    assert c.conclusion == f"too few shared tasks to compare (n={pairs}; at least 5)"
    scenarios = contrast(tasks()[: 2 * pairs], ["A", "B"], resamples=100, unit="scenario")
    assert scenarios.comparisons[0].conclusion.startswith("too few shared scenarios")


def test_too_few_comparisons_are_left_out_of_the_correction() -> None:
    observations = tasks() + [Observation(f"t{i}", "C", 50.0) for i in range(3)]
    result = contrast(observations, ["A", "B", "C"], resamples=100)
    b, c = result.comparisons
    assert c.design == "too few" and c.adjusted_p is None
    assert b.test is not None and b.adjusted_p == b.test.p_value  # a family of one


def test_the_same_seed_gives_the_same_numbers() -> None:
    first = contrast(tasks(), ["A", "B"], seed=11, resamples=300)
    assert first == contrast(tasks(), ["A", "B"], seed=11, resamples=300)
    assert first != contrast(tasks(), ["A", "B"], seed=12, resamples=300)


@pytest.mark.parametrize(
    ("groups", "message"),
    [(["A"], "two or more"), (["A", "A"], "two or more"), (["A", "Z"], "no observation of Z")],
)
def test_bad_groups_name_the_rule(groups: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        contrast(tasks(), groups)


def test_the_interval_and_the_deciding_test_answer_the_same_question() -> None:
    # 5 tasks, B ahead by 1, 2, 3, 4 and behind by 12: the mean difference is -0.4 (the
    # interval holds 0); Wilcoxon's signed ranks (+10 vs -5) lean towards B. The verdict is
    # on the mean, so it says no difference, and the signed ranks are a secondary figure.
    observations = []
    for i, gain in enumerate([1.0, 2.0, 3.0, 4.0, -12.0]):
        observations += [Observation(f"t{i}", "A", 50.0), Observation(f"t{i}", "B", 50.0 + gain)]
    (c,) = contrast(observations, ["A", "B"], resamples=500).comparisons
    assert c.difference is not None and c.test is not None
    assert c.test.test == "paired-permutation"
    assert c.difference.low < 0 < c.difference.high and not c.rejected
    assert any("the verdict is on the mean" in n for n in c.notes)


def test_tied_pass_fail_differences_get_the_exact_p_value_not_a_normal_one() -> None:
    # B passes and A fails on 5 scenarios: every difference is +1 (all tied). The smallest
    # two-sided p-value with 5 pairs is 2 / 2**5 = 0.0625; a normal approximation says 0.037.
    observations = []
    for i in range(5):
        observations += [
            Observation(f"s{i}", "A", 0.0, False),
            Observation(f"s{i}", "B", 1.0, True),
        ]
    (c,) = contrast(observations, ["A", "B"], resamples=100).comparisons
    assert c.signed_rank is not None and c.test is not None
    assert c.signed_rank.method == "exact" and c.signed_rank.p_value == pytest.approx(0.0625)
    assert c.test.method == "exact" and c.test.p_value == pytest.approx(0.0625)
    assert c.mcnemar is not None and c.mcnemar.p_value == pytest.approx(0.0625)
    assert not c.rejected
    assert any("smallest possible two-sided p-value is 0.0625" in n for n in c.notes)


def test_the_direction_is_the_mean_s_and_contrary_signed_ranks_are_flagged() -> None:
    # 20 tasks where B is 1 point better, one where it is 100 points worse: the signed ranks
    # say B is better (Wilcoxon rejects), the mean difference is negative: the verdict is on
    # the mean, which the sign-flip test does not find different from 0.
    observations = []
    for i, gain in enumerate([1.0] * 20 + [-100.0]):
        observations += [Observation(f"t{i}", "A", 50.0), Observation(f"t{i}", "B", 50.0 + gain)]
    (c,) = contrast(observations, ["A", "B"], resamples=200).comparisons
    assert c.difference is not None and c.difference.mean_difference < 0
    assert c.signed_rank is not None and c.signed_rank.p_value < 0.05
    assert not c.rejected and c.conclusion.startswith("no difference detected")
    assert any("ranks (Wilcoxon) and the mean point different ways" in n for n in c.notes)


def test_one_shared_task_is_compared_on_that_task_alone() -> None:
    observations = [
        Observation("shared", "A", 10.0),
        Observation("shared", "A", 12.0),
        Observation("shared", "B", 30.0),
        Observation("only-a", "A", 90.0),  # another task's difficulty must not enter
    ]
    observations += [Observation("shared", g, v) for g in "AB" for v in (11.0, 31.0, 9, 29)]
    (c,) = contrast(observations, ["A", "B"], resamples=100).comparisons
    assert (c.design, c.n_reference, c.n_other) == ("unpaired", 6, 5)
    assert c.mean_reference == pytest.approx((10 + 12 + 11 + 31 + 9 + 29) / 6)
    assert any("they share only shared" in n for n in c.notes)


def test_too_few_submissions_unpaired_give_no_interval_and_say_so() -> None:
    observations = [Observation("shared", "A", 10.0), Observation("shared", "A", 12.0)]
    observations += [Observation("shared", "B", 30.0), Observation("only-a", "A", 90.0)]
    (c,) = contrast(observations, ["A", "B"], resamples=100).comparisons
    assert (c.design, c.n_reference, c.n_other) == ("too few", 2, 1)
    assert c.difference is None and c.test is None and not c.rejected
    assert c.conclusion.startswith("too few submissions to compare unpaired (n=2 and 1")


def test_the_paired_effect_size_resamples_pairs_together() -> None:
    paired = contrast(tasks(), ["A", "B"], resamples=300).comparisons[0].effect
    assert paired is not None
    # B wins every pair by a little; tasks span 12..95. Resampled as pairs, A and B draw the
    # same tasks and the delta stays near its observed value; drawn apart, it spreads wider.
    a = list(TASK_LEVELS)
    b = [lv + g for lv, g in zip(TASK_LEVELS, GAINS, strict=True)]
    apart = cliffs_delta(b, a, resamples=300)
    assert paired.delta == apart.delta
    assert (paired.high - paired.low) < (apart.high - apart.low)
