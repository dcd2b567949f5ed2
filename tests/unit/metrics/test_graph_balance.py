"""Task distribution balance: 1 - stdev / mean of the per-agent step counts."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from tests.unit.metrics.test_graph_strategies import steps_st

from evalq.core.schemas import TraceStep
from evalq.metrics.graph import steps_per_agent, task_distribution_balance


def steps_by(*agents: str | None) -> list[TraceStep]:
    return [TraceStep(tool="t", agent=agent) for agent in agents]


def test_hand_computed_two_agents() -> None:
    # counts a 1, b 3: mean 2, sample stdev sqrt((1 + 1) / 1) = sqrt(2); 1 - sqrt(2)/2
    assert task_distribution_balance(steps_by("a", "b", "b", "b")) == pytest.approx(
        1 - math.sqrt(2) / 2
    )


def test_steps_without_agent_are_not_counted() -> None:
    steps = steps_by("a", None, "b", "b", None, "b")
    assert steps_per_agent(steps) == {"a": 1, "b": 3}
    assert task_distribution_balance(steps) == pytest.approx(1 - math.sqrt(2) / 2)


def test_even_split_is_one() -> None:
    assert task_distribution_balance(steps_by("a", "b", "c", "c", "b", "a")) == 1.0


def test_very_uneven_split_is_clamped_to_zero() -> None:
    # counts 1, 1, 10: mean 4, sample stdev sqrt((9 + 9 + 36) / 2) = 5.196; 1 - 1.299 < 0
    assert task_distribution_balance(steps_by("a", "b", *["c"] * 10)) == 0.0


def test_single_agent_is_one_per_spec() -> None:
    assert task_distribution_balance(steps_by("solo", "solo", None)) == 1.0


def test_no_attributed_steps_is_not_applicable() -> None:
    assert task_distribution_balance([]) is None
    assert task_distribution_balance(steps_by(None, None)) is None


@given(steps=steps_st)
def test_range_and_order_independence(steps: list[TraceStep]) -> None:
    value = task_distribution_balance(steps)
    assert (value is None) == all(step.agent is None for step in steps)
    assert value is None or 0.0 <= value <= 1.0
    assert task_distribution_balance(steps[::-1]) == value
