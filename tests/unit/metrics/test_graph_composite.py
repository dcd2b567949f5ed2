"""Tool efficiency and coordination quality: evalq's weighted means of the tier-3 metrics."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalq.metrics.graph import (
    COORDINATION_QUALITY_WEIGHTS,
    TOOL_EFFICIENCY_WEIGHTS,
    coordination_quality,
    tool_efficiency,
)

unit = st.none() | st.floats(0.0, 1.0)


def test_tool_efficiency_is_the_mean_of_the_parts_present() -> None:
    assert tool_efficiency(0.5, 1.0) == 0.75  # (0.5 + 1.0) / 2
    assert tool_efficiency(None, 0.4) == 0.4
    assert tool_efficiency(0.3, None) == 0.3
    assert tool_efficiency(None, None) is None


def test_tool_efficiency_custom_weights() -> None:
    weights = {"path_convergence": 3.0, "tool_selection_accuracy": 1.0}
    # (3 * 0.2 + 1 * 1.0) / 4 = 0.4
    assert tool_efficiency(0.2, 1.0, weights) == pytest.approx(0.4)


def test_coordination_quality_hand_computed() -> None:
    # efficiency 1 - 0.6 = 0.4, balance 0.3; centrality weighs 0 by default: (0.4 + 0.3) / 2
    value = coordination_quality(
        communication_overhead=0.6,
        task_distribution_balance=0.3,
        coordination_centrality=0.9,
        agent_count=2,
    )
    assert value == pytest.approx(0.35)


def test_coordination_quality_with_centrality_weighted() -> None:
    weights = {**COORDINATION_QUALITY_WEIGHTS, "coordination_centrality": 1.0}
    value = coordination_quality(
        communication_overhead=0.6,
        task_distribution_balance=0.5,
        coordination_centrality=0.9,
        agent_count=3,
        weights=weights,
    )
    assert value == pytest.approx((0.4 + 0.5 + 0.9) / 3)


def test_coordination_quality_renormalises_over_present_parts() -> None:
    # no messages: balance alone
    assert (
        coordination_quality(
            communication_overhead=None, task_distribution_balance=0.8, agent_count=2
        )
        == 0.8
    )
    assert (
        coordination_quality(
            communication_overhead=None, task_distribution_balance=None, agent_count=2
        )
        is None
    )


def test_single_agent_has_no_coordination_quality() -> None:
    # balance is 1.0 for one agent (spec), but nothing was coordinated
    assert (
        coordination_quality(
            communication_overhead=None, task_distribution_balance=1.0, agent_count=1
        )
        is None
    )


def test_default_weights() -> None:
    assert dict(TOOL_EFFICIENCY_WEIGHTS) == {
        "path_convergence": 1.0,
        "tool_selection_accuracy": 1.0,
    }
    assert dict(COORDINATION_QUALITY_WEIGHTS) == {
        "communication_efficiency": 1.0,
        "task_distribution_balance": 1.0,
        "coordination_centrality": 0.0,
    }


@given(a=unit, b=unit, c=unit, agents=st.integers(0, 5))
def test_ranges(a: float | None, b: float | None, c: float | None, agents: int) -> None:
    efficiency = tool_efficiency(a, b)
    assert (efficiency is None) == (a is None and b is None)
    assert efficiency is None or 0.0 <= efficiency <= 1.0
    quality = coordination_quality(
        communication_overhead=a,
        task_distribution_balance=b,
        coordination_centrality=c,
        agent_count=agents,
    )
    assert (quality is None) == (agents < 2 or (a is None and b is None))
    assert quality is None or 0.0 <= quality <= 1.0


@given(overhead=st.floats(0.0, 0.9), more=st.floats(0.01, 0.1), balance=unit)
def test_more_overhead_never_raises_coordination_quality(
    overhead: float, more: float, balance: float | None
) -> None:
    def quality(value: float) -> float | None:
        return coordination_quality(
            communication_overhead=value, task_distribution_balance=balance, agent_count=2
        )

    low, high = quality(overhead), quality(overhead + more)
    assert low is not None and high is not None
    assert high <= low
