"""Spec 003's variant analysis completed: consistency, the cost-of-pass frontier, per-metric
uplift with bootstrap intervals, and the worth-it verdict per step."""

from __future__ import annotations

import math
import random

import pytest

from evalq.core.profile import ScyllaProfile
from evalq.core.results import ScyllaScores
from evalq.scoring.scylla import score_scylla_run
from evalq.scoring.variants import compare_variants, consistency
from evalq.scoring.worth import analyse_variants, metric_uplifts, verdict

PROFILE = ScyllaProfile()


def run(passed: bool, impl: float, cost: float) -> ScyllaScores:
    return score_scylla_run(
        passed=passed, impl_rate=impl, cost_usd=cost, duration_seconds=1.0, profile=PROFILE
    )


def test_consistency_is_one_minus_the_coefficient_of_variation() -> None:
    assert consistency([0.5, 0.5, 0.5]) == 1.0
    # mean 0.4, population std 0.2 -> 1 - 0.2 / 0.4
    assert consistency([0.2, 0.6]) == pytest.approx(0.5)
    assert consistency([0.0, 0.0, 3.0]) == 0.0  # std 1.41 > mean 1: floored, never negative
    assert consistency([0.7]) is None  # one run says nothing about scatter
    assert consistency([0.0, 0.0]) is None  # mean 0: undefined


def test_the_frontier_is_the_cheapest_cost_of_pass_and_names_the_best_value() -> None:
    runs = {
        # cost of pass = total cost / passes
        "T0": [run(True, 0.5, 1.0), run(False, 0.5, 1.0)],  # 2.0 / 1 = 2.0
        "T1": [run(True, 0.9, 1.5), run(True, 0.9, 1.5)],  # 3.0 / 2 = 1.5
        "T2": [run(False, 0.9, 0.1), run(False, 0.9, 0.1)],  # never passes: inf, not a frontier
    }
    report = compare_variants(runs, PROFILE)
    assert report.frontier_cost_of_pass == pytest.approx(1.5)
    assert report.best_value == "T1"
    by_name = {v.variant: v for v in report.variants}
    assert by_name["T2"].cost_of_pass is not None and math.isinf(by_name["T2"].cost_of_pass)
    assert by_name["T1"].consistency == 1.0


def test_a_tie_in_cost_of_pass_goes_to_the_better_composite() -> None:
    runs = {
        "T0": [run(True, 0.2, 1.0)],
        "T1": [run(True, 0.8, 1.0)],
    }
    assert compare_variants(runs, PROFILE).best_value == "T1"


def test_the_pass_rate_uplift_compares_means_and_a_cheaper_variant_has_negative_cost_uplift() -> (
    None
):
    before = [run(True, 0.5, 2.0), run(False, 0.5, 2.0), run(False, 0.5, 2.0), run(False, 0.5, 2.0)]
    after = [run(True, 0.5, 1.0), run(True, 0.5, 1.0), run(True, 0.5, 1.0), run(False, 0.5, 1.0)]
    uplift = metric_uplifts(after, before, resamples=200)
    # pass rate 0.25 -> 0.75: (0.75 - 0.25) / 0.25 = 2.0; a median would read 0 -> 1, undefined
    assert uplift["pass_rate"].uplift == pytest.approx(2.0)
    assert uplift["pass_rate"].statistic == "mean"
    assert uplift["cost_usd"].uplift == pytest.approx(-0.5)
    assert uplift["cost_usd"].high == pytest.approx(-0.5)  # constant costs: a point interval
    assert uplift["impl_rate"].uplift == 0.0


def test_a_metric_nobody_reported_is_left_out() -> None:
    no_cost = [
        score_scylla_run(
            passed=True, impl_rate=None, cost_usd=None, duration_seconds=None, profile=PROFILE
        )
    ]
    assert set(metric_uplifts(no_cost, no_cost, resamples=50)) == {"composite", "pass_rate"}


def spread(centre: float, n: int = 10) -> list[float]:
    return [centre + 0.01 * (i - n / 2) for i in range(n)]


def scored(composites: list[float], cost: float = 1.0) -> list[ScyllaScores]:
    """Runs whose composites are ``composites`` (failed runs: the composite is the impl part)."""
    return [
        ScyllaScores(
            variant="T",
            passed=False,
            pass_rate=0.0,
            impl_rate=c,
            cost_usd=cost,
            duration_seconds=1.0,
            cost_of_pass=math.inf,
            composite=c,
            grade="F",
            run_index=None,
        )
        for c in composites
    ]


@pytest.mark.parametrize(
    ("after", "expected"),
    [(0.8, "worth it"), (0.2, "not worth it"), (0.5, "inconclusive")],
)
def test_the_verdict_is_the_permutation_test_and_its_interval_is_beside_it(
    after: float, expected: str
) -> None:
    runs = {"T0": scored(spread(0.5)), "T1": scored(spread(after), cost=1.2)}
    (step,) = analyse_variants(runs, PROFILE, resamples=500).transitions
    assert step.verdict == expected
    assert step.difference is not None and step.p_value is not None
    excluded = step.difference.low > 0 or step.difference.high < 0
    assert excluded == (expected != "inconclusive")  # the interval is the test's, inverted
    assert step.difference.method == "inverted permutation test"
    assert "dearer: cost +20.0%" in step.reason  # the cost is named, never folded in
    if expected == "inconclusive":
        assert "includes zero" in step.reason
    else:  # every run of one side above every run of the other: 2 / C(20, 10)
        assert step.p_value == pytest.approx(2 / math.comb(20, 10))


def test_no_test_is_inconclusive() -> None:
    assert verdict(None, False, {})[0] == "inconclusive"


def test_the_median_uplift_decides_nothing_and_can_point_elsewhere() -> None:
    # bimodal runs: T1's median sits on the high mode, its mean barely moves
    before = [0.1] * 5 + [0.9] * 5
    after = [0.1] * 4 + [0.9] * 6
    runs = {"T0": scored(before), "T1": scored(after)}
    (step,) = analyse_variants(runs, PROFILE, resamples=500).transitions
    composite = step.uplift["composite"]
    assert composite.uplift == pytest.approx((0.9 - 0.5) / 0.5)  # median 0.5 -> 0.9
    assert step.verdict == "inconclusive" and step.difference is not None
    assert step.difference.mean_difference == pytest.approx(0.08)


def test_the_analysis_steps_over_the_baseline_and_between_neighbours_reproducibly() -> None:
    runs = {
        "T2": [run(True, 0.9, 1.0) for _ in range(6)],
        "T0": [run(i % 2 == 0, 0.4, 1.0) for i in range(6)],
        "T1": [run(i % 3 != 0, 0.6, 1.1) for i in range(6)],
    }
    analysis = analyse_variants(runs, PROFILE, resamples=500, seed=7)
    assert [(t.source, t.target) for t in analysis.over_baseline] == [("T0", "T1"), ("T0", "T2")]
    assert [(t.source, t.target) for t in analysis.transitions] == [("T0", "T1"), ("T1", "T2")]
    assert [(t.source, t.target) for t in analysis.pairs] == [
        ("T0", "T1"),
        ("T0", "T2"),
        ("T1", "T2"),
    ]
    assert analysis.over_baseline[1].verdict == "worth it"  # every T2 run beats every T0 run
    assert analysis.over_baseline[0] == analysis.transitions[0]  # the same step, same numbers
    assert analysis == analyse_variants(runs, PROFILE, resamples=500, seed=7)
    data = analysis.to_dict()
    assert {k: data["bootstrap"][k] for k in ("level", "resamples", "seed", "steps")} == {
        "level": 0.95,
        "resamples": 500,
        "seed": 7,
        "steps": 3,  # T0 -> T1, T0 -> T2, T1 -> T2: one family
    }
    assert data["bootstrap"]["correction"] == "holm"
    assert data["best_value"] == "T2" and data["transitions"][1]["verdict"] == "worth it"
    # T1 costs 1.1 and passes 4 of 6 -> 6.6 / 4; T0 costs 1.0 and passes 3 of 6 -> 6 / 3
    assert analysis.transitions[0].cost_of_pass_delta == pytest.approx(6.6 / 4 - 2.0)


def test_without_the_baseline_variant_there_is_no_step_over_it() -> None:
    runs = {"T1": [run(True, 0.5, 1.0)], "T2": [run(True, 0.6, 1.0)]}
    analysis = analyse_variants(runs, PROFILE, resamples=50)
    assert analysis.over_baseline == () and len(analysis.transitions) == 1


def identical_variants(rng: random.Random, variants: int = 4, runs: int = 10) -> dict:
    def one() -> ScyllaScores:
        return run(rng.random() < 0.5, round(rng.uniform(0.2, 1.0), 2), rng.uniform(0.8, 1.2))

    return {f"T{i}": [one() for _ in range(runs)] for i in range(variants)}


def test_every_pair_is_one_family_and_identical_variants_rarely_get_a_verdict() -> None:
    runs = identical_variants(random.Random(3))
    analysis = analyse_variants(runs, PROFILE, resamples=400, seed=1)
    assert analysis.steps == 6  # every pair of T0..T3
    for step in analysis.pairs:
        assert step.difference is not None and step.adjusted_p is not None
        excluded = step.difference.low > 0 or step.difference.high < 0
        assert excluded == (step.verdict != "inconclusive")
        assert step.difference.level == pytest.approx(analysis.step_level)
    # Four identical variants of 5 runs: a verdict other than inconclusive anywhere on the
    # ladder is a false one; the permutation tests are exact and Holm holds the family at 5%
    # (bench/interval_coverage.py measures it over 1,000 ladders).
    rng = random.Random(2026)
    false = sum(
        any(t.verdict != "inconclusive" for t in a.pairs)
        for a in (
            analyse_variants(identical_variants(rng, runs=5), PROFILE, resamples=200, seed=s)
            for s in range(150)
        )
    )
    assert false / 150 <= 0.07


def test_too_few_runs_give_no_interval_and_no_verdict() -> None:
    runs = {
        "T0": [run(i % 2 == 0, 0.4, 1.0) for i in range(10)],
        "T1": [run(True, 0.9, 1.0) for _ in range(4)],
    }
    (step,) = analyse_variants(runs, PROFILE, resamples=200).transitions
    assert step.difference is None and step.verdict == "inconclusive"
    assert step.reason == "too few runs to compare (n=10 and 4; at least 5)"


def test_best_value_comes_with_the_share_of_resamples_in_which_it_holds() -> None:
    clear = {
        "T0": [run(i % 2 == 0, 0.5, 1.0) for i in range(10)],  # 10 / 5 = 2.0 per pass
        "T1": [run(True, 0.9, 1.0) for _ in range(10)],  # 1.0 per pass in every resample
    }
    analysis = analyse_variants(clear, PROFILE, resamples=500)
    assert analysis.report.best_value == "T1" and analysis.best_value_share == 1.0
    assert analysis.to_dict()["best_value_share"] == 1.0
    close = {
        "T0": [run(i % 2 == 0, 0.5, 1.0) for i in range(10)],  # 2.0 per pass
        "T1": [run(i % 2 == 0, 0.5, 0.99) for i in range(10)],  # 1.98: best, barely
    }
    analysis = analyse_variants(close, PROFILE, resamples=2000, seed=4)
    assert analysis.report.best_value == "T1"
    assert analysis.best_value_share is not None and 0.3 < analysis.best_value_share < 0.7
    assert analyse_variants(close, PROFILE, resamples=2000, seed=4) == analysis


def test_a_verdict_from_few_runs_or_unlike_shapes_carries_the_note_compare_shows() -> None:
    # 6 runs a side, every T1 run above every T0 run: the test rejects, but 6 values cannot show
    # whether the two sides share a shape (the test's assumption), so the ladder says so, as
    # `evalq compare` does beside the same test
    few = {"T0": scored(spread(0.5, 6)), "T1": scored(spread(0.8, 6))}
    (step,) = analyse_variants(few, PROFILE, resamples=500).transitions
    assert step.verdict == "worth it"
    assert "this verdict cannot be trusted on its own" in step.reason
    assert "6 values on the smaller side cannot show" in step.reason
    # 20 a side of one shape, shifted: the same verdict, no note
    many = {"T0": scored(spread(0.5, 20)), "T1": scored(spread(0.8, 20))}
    (step,) = analyse_variants(many, PROFILE, resamples=500).transitions
    assert step.verdict == "worth it" and "cannot be trusted" not in step.reason
    # an inconclusive step has nothing to vouch for
    (step,) = analyse_variants({**few, "T1": scored(spread(0.5, 6))}, PROFILE).transitions
    assert step.verdict == "inconclusive" and "cannot be trusted" not in step.reason
