"""Groups compared over the units they share: paired where they pair, unpaired (labelled)
where they do not, corrected together."""

from __future__ import annotations

import pytest
from scipy.stats import wilcoxon

from evalq.scoring.comparison import cliffs_delta, correct, mcnemar_exact
from evalq.scoring.contrast import Observation, contrast, smallest_p, unit_values

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
    assert (b.design, b.pairs, b.test.test) == ("paired", 10, "wilcoxon-signed-rank")
    expected = wilcoxon(GAINS, method="exact").pvalue
    assert b.test.p_value == pytest.approx(expected)  # 2 / 1024
    assert b.rejected and b.conclusion.startswith("B scores higher than A")
    assert b.difference.mean_difference == pytest.approx(sum(GAINS) / 10)
    assert 0 < b.difference.low <= b.difference.high
    assert b.permutation is not None and b.permutation.p_value == pytest.approx(2 / 1024)
    assert b.mcnemar is None  # no pass/fail outcomes
    # Cliff's delta compares the two sets of task values: close to 0, the tasks dominate
    assert abs(b.effect.delta) < 0.2


def test_a_group_s_value_on_a_unit_is_the_mean_of_its_observations() -> None:
    units = unit_values(
        [Observation("t", "A", 1.0), Observation("t", "A", 3.0), Observation("t", "B", 5.0)]
    )
    assert units[0].values == {"A": 2.0, "B": 5.0}


def test_one_shared_task_falls_back_to_an_unpaired_test_and_says_so() -> None:
    runs = [Observation("t", "T0", v) for v in (0.2, 0.3, 0.4, 0.5)]
    runs += [Observation("t", "T1", v) for v in (0.6, 0.7, 0.8, 0.9)]
    (c,) = contrast(runs, ["T0", "T1"], resamples=300).comparisons
    assert (c.design, c.pairs, c.n_reference, c.n_other) == ("unpaired", 0, 4, 4)
    assert c.test.test == "mann-whitney-u (unpaired)" and not c.test.paired
    assert c.test.p_value == pytest.approx(2 / 70)  # all 4 above all 4: 2 / C(8, 4)
    assert c.effect.delta == 1.0 and c.permutation is None
    assert c.difference.mean_difference == pytest.approx(0.4) and c.difference.pairs == 0
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
        Observation("s1", "A", 1.0, True),
        Observation("s1", "B", 0.0, False),
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
    (c,) = contrast(tasks()[:6], ["A", "B"], resamples=100).comparisons  # 3 tasks
    assert c.pairs == 3 and not c.rejected
    assert any("smallest possible two-sided p-value is 0.25" in n for n in c.notes)


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
    assert c.test.method == "exact" and c.test.p_value == pytest.approx(0.0625)
    assert c.mcnemar is not None and c.mcnemar.p_value == pytest.approx(0.0625)
    assert not c.rejected
    assert any("smallest possible two-sided p-value is 0.0625" in n for n in c.notes)


def test_the_direction_is_the_deciding_test_s_and_a_contrary_mean_is_flagged() -> None:
    # 20 tasks where B is 1 point better, one where it is 100 points worse: the signed ranks
    # say B is better (Wilcoxon rejects), the mean difference is negative.
    observations = []
    for i, gain in enumerate([1.0] * 20 + [-100.0]):
        observations += [Observation(f"t{i}", "A", 50.0), Observation(f"t{i}", "B", 50.0 + gain)]
    (c,) = contrast(observations, ["A", "B"], resamples=200).comparisons
    assert c.rejected and c.difference.mean_difference < 0
    assert c.conclusion.startswith("B scores higher than A")
    assert any("ranks and the mean point different ways" in n for n in c.notes)


def test_one_shared_task_is_compared_on_that_task_alone() -> None:
    observations = [
        Observation("shared", "A", 10.0),
        Observation("shared", "A", 12.0),
        Observation("shared", "B", 30.0),
        Observation("only-a", "A", 90.0),  # another task's difficulty must not enter
    ]
    (c,) = contrast(observations, ["A", "B"], resamples=100).comparisons
    assert (c.design, c.n_reference, c.n_other) == ("unpaired", 2, 1)
    assert c.mean_reference == 11.0
    assert any("they share only shared" in n for n in c.notes)
    assert any("single submission" in n for n in c.notes)


def test_the_paired_effect_size_resamples_pairs_together() -> None:
    paired = contrast(tasks(), ["A", "B"], resamples=300).comparisons[0].effect
    # B wins every pair by a little; tasks span 12..95. Resampled as pairs, A and B draw the
    # same tasks and the delta stays near its observed value; drawn apart, it spreads wider.
    a = list(TASK_LEVELS)
    b = [lv + g for lv, g in zip(TASK_LEVELS, GAINS, strict=True)]
    apart = cliffs_delta(b, a, resamples=300)
    assert paired.delta == apart.delta
    assert (paired.high - paired.low) < (apart.high - apart.low)
