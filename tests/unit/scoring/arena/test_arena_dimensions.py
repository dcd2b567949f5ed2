"""Token, tool-call, iteration, efficiency, speed and cost scores: hand-computed values."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from evalq.core.errors import InvalidInput
from evalq.core.profile import ArenaProfile
from evalq.scoring.arena import (
    ArenaRun,
    Baseline,
    cost_score,
    efficiency_score,
    iteration_score,
    speed_score,
    token_score,
    tool_call_score,
)

Run = Callable[..., ArenaRun]
Base = Callable[..., Baseline]


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [
        (500, 100.0),  # below min 1000
        (1000, 100.0),  # at min
        (2000, 75.0),  # (5000 - 2000) / (5000 - 1000) = 0.75
        (4500, 12.5),  # 500 / 4000 = 0.125
        (5000, 0.0),  # at max
        (9000, 0.0),  # above max
    ],
)
def test_token_score(make_run: Run, make_baseline: Base, tokens: int, expected: float) -> None:
    assert token_score(make_run(total_tokens=tokens), make_baseline()) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("calls", "expected"),
    [(0, 100.0), (2, 100.0), (5, 70.0), (11, 10.0), (12, 0.0), (40, 0.0)],
    # 5 calls: (12 - 5) / (12 - 2) = 0.7; 11 calls: 1 / 10 = 0.1
)
def test_tool_call_score(make_run: Run, make_baseline: Base, calls: int, expected: float) -> None:
    assert tool_call_score(make_run(tool_calls=calls), make_baseline()) == pytest.approx(expected)


def test_zero_range_does_not_divide_by_zero(make_run: Run, make_baseline: Base) -> None:
    # every earlier run used exactly 100 tokens and 3 tool calls
    baseline = make_baseline(min_tokens=100.0, max_tokens=100.0, min_tool_calls=3.0,
                             max_tool_calls=3.0, min_execution_time=30.0, max_execution_time=30.0,
                             min_cost=0.05, max_cost=0.05)  # fmt: skip
    at = make_run(total_tokens=100, tool_calls=3, execution_time=30.0, cost_usd=0.05)
    above = make_run(total_tokens=101, tool_calls=4, execution_time=31.0, cost_usd=0.06)
    below = make_run(total_tokens=50, tool_calls=1, execution_time=10.0, cost_usd=0.01)
    profile = ArenaProfile()
    for run in (at, below):
        assert token_score(run, baseline) == 100.0
        assert tool_call_score(run, baseline) == 100.0
        assert speed_score(run, baseline, profile).score == 100.0
        assert cost_score(run, baseline, profile).score == 100.0
    assert token_score(above, baseline) == 0.0
    assert tool_call_score(above, baseline) == 0.0
    assert speed_score(above, baseline, profile).score == 0.0
    assert cost_score(above, baseline, profile).score == 0.0


@pytest.mark.parametrize(
    ("iterations", "median", "expected"),
    [
        (1, 3.0, 100.0),  # first try
        (2, 3.0, 85.0),  # 100 - (2 - 1) * 15
        (3, 3.0, 70.0),  # 100 - (3 - 1) * 15
        (4, 3.0, 40.0),  # above the median: 50 - (4 - 3) * 10
        (8, 3.0, 0.0),  # 50 - 5 * 10 = 0
        (9, 3.0, 0.0),  # 50 - 60 = -10 -> 0
        (5, 5.0, 50.0),  # 100 - 60 = 40, floored at 50
        (2, 1.0, 40.0),  # median 1: 50 - (2 - 1) * 10
        (3, 2.5, 45.0),  # fractional median: 50 - 0.5 * 10
    ],
)
def test_iteration_score(
    make_run: Run, make_baseline: Base, iterations: int, median: float, expected: float
) -> None:
    baseline = make_baseline(median_iterations=median)
    assert iteration_score(make_run(iterations=iterations), baseline) == pytest.approx(expected)


def test_combined_efficiency(make_run: Run, make_baseline: Base, arena: ArenaProfile) -> None:
    run = make_run(total_tokens=2000, tool_calls=5, iterations=2)
    result = efficiency_score(run, make_baseline(), arena)
    # tokens 75, tool calls 70, iterations 85: 0.5 * 75 + 0.3 * 70 + 0.2 * 85 = 37.5 + 21 + 17
    assert (result.tokens, result.tool_calls, result.iterations) == pytest.approx((75, 70, 85))
    assert result.score == pytest.approx(75.5)


def test_efficiency_weights_are_normalised(make_run: Run, make_baseline: Base) -> None:
    run = make_run(total_tokens=2000, tool_calls=5, iterations=2)
    equal = ArenaProfile(efficiency_weights={"tokens": 2, "tool_calls": 2, "iterations": 2})
    # (75 + 70 + 85) / 3 = 76.6667
    assert efficiency_score(run, make_baseline(), equal).score == pytest.approx(230 / 3)


def test_efficiency_without_usable_weights(make_run: Run, make_baseline: Base) -> None:
    with pytest.raises(InvalidInput):
        efficiency_score(make_run(), make_baseline(), ArenaProfile(efficiency_weights={"x": 1}))


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (30.0, 100.0),  # below min 60
        (60.0, 100.0),
        (495.0, 81.76037681770133),  # r = 1305 / 1740 = 0.75; 0.75 ** 0.7 = 0.8176
        (1800.0, 0.0),
        (4000.0, 0.0),
    ],
)
def test_speed_score(
    make_run: Run, make_baseline: Base, arena: ArenaProfile, seconds: float, expected: float
) -> None:
    result = speed_score(make_run(execution_time=seconds), make_baseline(), arena)
    assert result.score == pytest.approx(expected)
    assert not result.not_reported


def test_speed_exponent_from_profile(make_run: Run, make_baseline: Base) -> None:
    # exponent 1: linear, 0.75 -> 75
    linear = ArenaProfile(speed_exponent=1.0)
    assert speed_score(make_run(execution_time=495.0), make_baseline(), linear).score == 75.0


@pytest.mark.parametrize("seconds", [None, 0.0])
def test_missing_time_scores_the_worst_value_and_is_not_reported(
    make_run: Run, make_baseline: Base, arena: ArenaProfile, seconds: float | None
) -> None:
    # docs/scoring.md: the spec's 50 let a run raise its score by leaving its time out; 0 is "not
    # measured", never "perfect"
    result = speed_score(make_run(execution_time=seconds), make_baseline(), arena)
    assert (result.score, result.not_reported) == (0.0, True)
    slowest = speed_score(make_run(execution_time=1e6), make_baseline(), arena)
    assert result.score <= slowest.score


@pytest.mark.parametrize(
    ("dollars", "expected"),
    [(0.005, 100.0), (0.01, 100.0), (0.06, 75.0), (0.21, 0.0), (1.0, 0.0)],
    # 0.06: (0.21 - 0.06) / (0.21 - 0.01) = 0.15 / 0.2 = 0.75
)
def test_cost_score(
    make_run: Run, make_baseline: Base, arena: ArenaProfile, dollars: float, expected: float
) -> None:
    result = cost_score(make_run(cost_usd=dollars), make_baseline(), arena)
    assert result.score == pytest.approx(expected)
    assert not result.not_reported


@pytest.mark.parametrize("dollars", [None, 0.0])
def test_missing_cost_scores_the_worst_value_and_is_not_reported(
    make_run: Run, make_baseline: Base, dollars: float | None
) -> None:
    result = cost_score(make_run(cost_usd=dollars), make_baseline(), ArenaProfile())
    assert (result.score, result.not_reported) == (0.0, True)
    dearest = cost_score(make_run(cost_usd=1e6), make_baseline(), ArenaProfile())
    assert result.score <= dearest.score
