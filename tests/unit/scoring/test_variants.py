"""Spec 003 cross-variant analysis."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalq.core.profile import ScyllaProfile
from evalq.core.results import ScyllaScores
from evalq.read.variants import VariantStatistics
from evalq.scoring.scylla import score_scylla_run
from evalq.scoring.variants import (
    compare_variants,
    cost_delta,
    cost_variance,
    pass_rate_variance,
    uplift,
    variant_stats,
)

PROFILE = ScyllaProfile()


def run(passed: bool = True, impl: float | None = None, cost: float | None = None) -> ScyllaScores:
    return score_scylla_run(
        passed=passed, impl_rate=impl, cost_usd=cost, duration_seconds=1.0, profile=PROFILE
    )


def test_uplift() -> None:
    assert uplift(0.90, 0.75) == pytest.approx(0.20)  # (0.90 - 0.75) / 0.75, spec's example
    assert uplift(0.60, 0.75) == pytest.approx(-0.20)  # a regression is negative
    assert uplift(0.75, 0.75) == 0.0
    assert uplift(0.5, 0.0) is None  # docs/scoring.md: undefined, never 0 or infinity


def test_spec_003_example_3_cross_tier() -> None:
    # passed + impl = 2 x composite: impl 0.4, 0.6, 0.7, 0.8 give 0.70, 0.80, 0.85, 0.90
    runs = {f"T{i}": [run(True, impl)] * 3 for i, impl in enumerate([0.4, 0.6, 0.7, 0.8])}
    report = compare_variants(runs, PROFILE)
    assert report.baseline == "T0"
    medians = [v.composite.median for v in report.variants if v.composite]
    assert medians == pytest.approx([0.70, 0.80, 0.85, 0.90])
    # (0.80 - 0.70) / 0.70 = 0.1429; (0.85 - 0.70) / 0.70 = 0.2143; (0.90 - 0.70) / 0.70 = 0.2857
    assert {k: round(v, 3) for k, v in report.uplift.items() if v is not None} == {
        "T1": 0.143,
        "T2": 0.214,
        "T3": 0.286,
    }
    assert report.composite_variance is not None
    assert round(report.composite_variance, 5) == 0.00547  # 0.00546875
    assert [v.grade for v in report.variants] == [
        "D",
        "C",
        "B",
        "B",
    ]  # 0.70 >= 0.65, 0.80 >= 0.75, 0.85 and 0.90 >= 0.85


def test_spec_003_example_2_as_a_variant() -> None:
    outcomes = [True, True, False, True, True, True, False, True, True, True]
    stats = variant_stats("T0", [run(p) for p in outcomes], PROFILE)
    assert (stats.pass_rate.median, stats.pass_rate.mode) == (1.0, 1.0)
    assert stats.pass_rate.mean == pytest.approx(0.8)
    assert stats.pass_rate.std_dev == pytest.approx(0.4)
    assert stats.impl_rate is None  # no run had a judge score
    assert stats.cost_usd is None and stats.cost_of_pass is None


def test_variances_and_cost_delta_over_medians() -> None:
    report = compare_variants(
        {"T0": [run(True, cost=1.0)] * 2, "T1": [run(False, cost=3.0), run(False, cost=3.0)]},
        PROFILE,
    )
    # pass-rate medians 1 and 0: mean 0.5, variance (0.25 + 0.25) / 2
    assert report.pass_rate_variance == 0.25
    # cost medians 1 and 3: mean 2, variance (1 + 1) / 2; delta 3 - 1
    assert report.cost_variance == 1.0
    assert report.cost_delta == 2.0
    assert pass_rate_variance(report.variants) == 0.25
    assert cost_variance(report.variants) == 1.0
    assert cost_delta(report.variants) == 2.0
    assert report.uplift == {"T1": pytest.approx(-1.0)}  # composite 0 vs 1


def test_variant_cost_of_pass_is_total_cost_per_pass() -> None:
    runs = [run(True, cost=1.0), run(False, cost=1.0), run(True, cost=1.0), run(False, cost=1.0)]
    assert variant_stats("T1", runs, PROFILE).cost_of_pass == 2.0  # $4 / 2 passes
    never = variant_stats("T2", [run(False, cost=1.0)], PROFILE)
    assert never.cost_of_pass == math.inf


def test_baseline_missing_or_zero_gives_no_uplift() -> None:
    assert compare_variants({"T1": [run()]}, PROFILE).uplift == {"T1": None}
    zero = compare_variants({"T0": [run(False, 0.0)], "T1": [run()]}, PROFILE)
    assert zero.uplift == {"T1": None}


def test_baseline_variant_comes_from_the_profile() -> None:
    report = compare_variants(
        {"T0": [run(False, 0.0)], "T5": [run(False, 0.5)]},
        ScyllaProfile(baseline_variant="T5"),
    )
    assert report.baseline == "T5"
    assert report.uplift == {"T0": pytest.approx(-1.0)}  # (0 - 0.25) / 0.25


def test_natural_variant_order() -> None:
    report = compare_variants({"T10": [run()], "T2": [run()], "T0": [run()]}, PROFILE)
    assert [v.variant for v in report.variants] == ["T0", "T2", "T10"]


def test_empty_inputs() -> None:
    report = compare_variants({}, PROFILE)
    assert report.variants == ()
    assert (report.pass_rate_variance, report.cost_variance, report.cost_delta) == (None,) * 3
    with pytest.raises(ValueError, match="T3"):
        compare_variants({"T3": []}, PROFILE)


def test_report_keeps_an_infinite_cost_of_pass_for_the_served_model_to_write() -> None:
    report = compare_variants({"T0": [run(False, 0.5, cost=0.1)], "T1": [run(True, 1.0)]}, PROFILE)
    data = report.to_dict()
    assert data["variants"][0]["cost_of_pass"] == math.inf
    served = VariantStatistics.model_validate(data["variants"][0])
    assert json.loads(served.model_dump_json())["cost_of_pass"] == "inf"


@given(st.lists(st.tuples(st.booleans(), st.floats(0, 1)), min_size=1, max_size=12))
def test_variant_statistics_ranges(outcomes: list[tuple[bool, float]]) -> None:
    stats = variant_stats("T1", [run(p, i) for p, i in outcomes], PROFILE)
    assert stats.composite is not None
    assert 0.0 <= stats.composite.min <= stats.composite.median <= stats.composite.max <= 1.0
    assert 0.0 <= stats.pass_rate.mean <= 1.0
    assert stats.runs == len(outcomes)
