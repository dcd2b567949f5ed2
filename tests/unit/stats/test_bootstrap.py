"""The bootstrap interval of a variant's uplift over the baseline."""

from __future__ import annotations

import pytest

from evalq.stats.bootstrap import bootstrap_uplift, quantile


def test_quantile_interpolates_between_order_statistics() -> None:
    # type 7: position q * (n - 1); 0.25 * 4 = 1 -> 2.0; 0.1 * 4 = 0.4 -> 1 + 0.4 * (2 - 1)
    assert quantile([1.0, 2.0, 3.0, 4.0, 5.0], 0.25) == 2.0
    assert quantile([1.0, 2.0, 3.0, 4.0, 5.0], 0.1) == pytest.approx(1.4)
    assert quantile([7.0], 0.975) == 7.0


def test_constant_samples_give_a_point_interval() -> None:
    result = bootstrap_uplift([0.9, 0.9, 0.9], [0.6, 0.6, 0.6, 0.6])
    assert result.uplift == pytest.approx(0.5)
    assert (result.low, result.high) == (pytest.approx(0.5), pytest.approx(0.5))
    assert (result.resamples, result.undefined) == (2000, 0)


def test_a_two_run_variant_spans_its_three_possible_medians() -> None:
    # Baseline constant 10. A resample of the variant [10, 20] has median 10, 15 or 20 with
    # probabilities 1/4, 1/2, 1/4: uplift 0, 0.5 or 1. The 2.5% and 97.5% quantiles of 2000
    # such draws are 0 and 1 (each extreme holds ~500 draws, far more than the 50 in a tail).
    result = bootstrap_uplift([10.0, 20.0], [10.0] * 5)
    assert result.uplift == pytest.approx(0.5)
    assert (result.low, result.high) == (0.0, 1.0)
    narrow = bootstrap_uplift([10.0, 20.0], [10.0] * 5, level=0.4)  # the 30% and 70% quantiles
    assert (narrow.low, narrow.high) == (0.5, 0.5)


def test_the_seed_makes_it_reproducible_and_matters() -> None:
    variant = [0.71, 0.82, 0.64, 0.9, 0.77, 0.69]
    baseline = [0.55, 0.61, 0.7, 0.48, 0.66]
    first = bootstrap_uplift(variant, baseline, seed=3)
    assert first == bootstrap_uplift(variant, baseline, seed=3)
    assert first != bootstrap_uplift(variant, baseline, seed=4)
    assert first.low is not None and first.high is not None and first.uplift is not None
    assert first.low <= first.uplift <= first.high


def test_a_zero_baseline_median_leaves_the_uplift_undefined() -> None:
    result = bootstrap_uplift([0.5, 0.6], [0.0, 0.0, 0.0])
    assert (result.uplift, result.low, result.high) == (None, None, None)
    assert result.undefined == result.resamples
    partly = bootstrap_uplift([0.5], [0.0, 1.0], resamples=400)  # median 0 in 1/4 of resamples
    assert 0 < partly.undefined < 400 and partly.low is not None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"variant": []}, "both samples"), ({"level": 1.0}, "level"), ({"resamples": 0}, "resamples")],
)
def test_bad_arguments_name_the_rule(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {"variant": [1.0], "baseline": [1.0]} | kwargs
    with pytest.raises(ValueError, match=message):
        bootstrap_uplift(**args)  # type: ignore[arg-type]


def test_the_mean_statistic_compares_pass_rates_a_median_cannot() -> None:
    # 1 of 4 passes vs 3 of 4: medians 0 and 1 (uplift undefined); means 0.25 -> 0.75
    result = bootstrap_uplift([1.0, 1.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0], statistic="mean")
    assert result.uplift == pytest.approx(2.0) and result.statistic == "mean"
    assert bootstrap_uplift([1.0, 1.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0]).uplift is None
    assert result.seed == 0
    assert bootstrap_uplift([0.9] * 3, [0.6] * 3).excludes_zero  # a point interval at +50%
    assert bootstrap_uplift([0.3] * 3, [0.6] * 3).excludes_zero  # ... and at -50%
    assert not bootstrap_uplift([0.6] * 3, [0.6] * 3).excludes_zero  # at 0 it holds zero


def test_the_uplift_of_a_mean_reads_the_expanded_quantiles() -> None:
    import numpy as np

    from evalq.stats.bootstrap import _resampled
    from evalq.stats.comparison import expanded_tail

    variant, baseline = [1.0, 1.0, 0.0, 1.0, 1.0, 0.0], [1.0, 0.0, 0.0, 1.0, 0.0]
    rng = np.random.default_rng(5)
    after = _resampled(variant, rng, 3000, "mean")
    before = _resampled(baseline, rng, 3000, "mean")
    kept = before != 0
    drawn = sorted(((after[kept] - before[kept]) / before[kept]).tolist())
    interval = bootstrap_uplift(variant, baseline, resamples=3000, seed=5, statistic="mean")
    tail = expanded_tail(0.95, 5)  # the smaller sample's size
    assert interval.low == pytest.approx(quantile(drawn, tail))
    assert interval.high == pytest.approx(quantile(drawn, 1 - tail))
