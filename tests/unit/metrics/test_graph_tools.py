"""Tool selection accuracy over the steps whose context has an optimal tool."""

from __future__ import annotations

from hypothesis import given
from tests.unit.metrics.test_graph_strategies import optimal_st, steps_st

from evalq.core.schemas import TraceStep
from evalq.metrics.graph import tool_selection_accuracy

OPTIMAL = {"find": "search", "edit": "editor"}


def test_hand_computed() -> None:
    steps = [
        TraceStep(tool="search", context="find"),  # judged, correct
        TraceStep(tool="grep", context="find"),  # judged, wrong
        TraceStep(tool="editor", context="edit"),  # judged, correct
        TraceStep(tool="ls"),  # no context: not judged
        TraceStep(tool="cat", context="other"),  # context without an optimal tool: not judged
    ]
    # 2 correct of 3 judged
    assert tool_selection_accuracy(steps, OPTIMAL) == 2 / 3


def test_all_wrong_is_zero_not_none() -> None:
    assert tool_selection_accuracy([TraceStep(tool="grep", context="find")], OPTIMAL) == 0.0


def test_not_applicable_cases() -> None:
    judged = [TraceStep(tool="search", context="find")]
    assert tool_selection_accuracy([], OPTIMAL) is None
    assert tool_selection_accuracy(judged, {}) is None
    assert tool_selection_accuracy(judged, None) is None
    assert tool_selection_accuracy([TraceStep(tool="search")], OPTIMAL) is None
    assert tool_selection_accuracy([TraceStep(tool="x", context="other")], OPTIMAL) is None


@given(steps=steps_st, optimal=optimal_st)
def test_range_and_applicability(steps: list[TraceStep], optimal: dict[str, str]) -> None:
    value = tool_selection_accuracy(steps, optimal)
    judged = [s for s in steps if s.context in optimal]
    assert (value is None) == (not judged)
    assert value is None or 0.0 <= value <= 1.0


@given(steps=steps_st, optimal=optimal_st)
def test_using_the_optimal_tool_everywhere_scores_one(
    steps: list[TraceStep], optimal: dict[str, str]
) -> None:
    perfect = [
        s.model_copy(update={"tool": optimal[s.context]}) if s.context in optimal else s
        for s in steps
    ]
    assert tool_selection_accuracy(perfect, optimal) in (None, 1.0)
