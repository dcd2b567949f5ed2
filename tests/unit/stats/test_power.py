"""The run counts `pairs_needed` gives reach 80% power with evalq's own test: simulated."""

from __future__ import annotations

import numpy as np
import pytest

from evalq.stats.comparison import paired_permutation_test
from evalq.stats.power import paired_power, pairs_needed, sign_flip_floor

SIMULATIONS = 1_500
"""Data sets per case: the power's standard error is about 1 point at 80%."""


@pytest.mark.parametrize(
    ("sd", "detect", "alpha"),
    [(0.30, 0.20, 0.05), (12.0, 10.0, 0.05), (0.25, 0.10, 0.10)],
)
def test_the_counts_given_reach_80_percent_power_with_the_sign_flip_test(
    sd: float, detect: float, alpha: float
) -> None:
    n = pairs_needed(sd=sd, detect=detect, alpha=alpha)
    assert n is not None and 6 <= n <= 60
    rng = np.random.default_rng(48)
    rejected = 0
    for i in range(SIMULATIONS):
        differences = rng.normal(detect, sd, n).tolist()
        test = paired_permutation_test(differences, [0.0] * n, resamples=1_000, seed=i)
        rejected += test.p_value <= alpha
    power = rejected / SIMULATIONS
    assert power == pytest.approx(0.80, abs=0.035), (n, power)
    # one pair fewer falls short: the count is the fewest that reaches the power
    assert paired_power(n - 1, sd=sd, detect=detect, alpha=alpha) < 0.8


def test_the_floor_is_where_the_sign_flip_test_can_first_reject() -> None:
    assert sign_flip_floor(0.05) == 6  # 2 / 2**5 = 0.0625 > 0.05 >= 2 / 2**6
    assert sign_flip_floor(0.01) == 8
    assert sign_flip_floor(0.5) == 5  # never under evalq's fewest pairs for a verdict
    assert pairs_needed(sd=0.0, detect=0.1, alpha=0.05) == 6
    assert pairs_needed(sd=0.01, detect=1.0, alpha=0.05) == 6


def test_a_difference_far_below_the_noise_is_out_of_reach() -> None:
    assert pairs_needed(sd=1.0, detect=0.001, alpha=0.05) is None


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"sd": 0.1, "detect": 0.0, "alpha": 0.05}, "detect"),
        ({"sd": -1.0, "detect": 0.1, "alpha": 0.05}, "sd"),
        ({"sd": 0.1, "detect": 0.1, "alpha": 1.5}, "alpha"),
    ],
)
def test_bad_arguments_name_the_rule(arguments: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        pairs_needed(**arguments)
