"""Path convergence: minimum steps in the reference / transitions from first start to end."""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from tests.unit.metrics.test_graph_strategies import TOOLS, reference_st, steps_of, steps_st

from evalq.core.schemas import ToolGraph, TraceStep
from evalq.metrics.graph import actual_steps, minimum_steps, path_convergence, reference_graph

# Reference graph (start A, end D):
#
#     A ---> B ---> C ---> D
#      \___________^
#
# Shortest path A -> C -> D: 2 edges.
REFERENCE = ToolGraph(edges=[("A", "B"), ("B", "C"), ("C", "D"), ("A", "C")], start="A", end="D")


def test_minimum_steps_is_the_shortest_path_length() -> None:
    assert minimum_steps(REFERENCE) == 2


@pytest.mark.parametrize(
    ("tools", "expected"),
    [
        (("A", "C", "D"), 1.0),  # 2 / 2
        (("A", "B", "C", "D"), 2 / 3),  # 2 / 3
        # first A at index 1, first D after it at index 5: 5 - 1 = 4 transitions; 2 / 4
        (("X", "A", "B", "B", "C", "D", "A"), 0.5),
        # the second A and D do not matter: first A (0) to first D after it (3); 2 / 3
        (("A", "B", "C", "D", "A", "D"), 2 / 3),
        # a shortcut the reference does not contain: 2 / 1, clipped to 1
        (("A", "D"), 1.0),
    ],
)
def test_ratio_hand_computed(tools: tuple[str, ...], expected: float) -> None:
    assert path_convergence(steps_of(*tools), REFERENCE) == pytest.approx(expected)


@pytest.mark.parametrize(
    "tools",
    [
        ("A", "B", "C"),  # never reaches D
        ("D", "A", "B"),  # D only before the first A
        ("B", "C", "D"),  # never calls A
    ],
)
def test_run_that_never_goes_from_start_to_end_scores_zero(tools: tuple[str, ...]) -> None:
    assert actual_steps(steps_of(*tools), "A", "D") is None
    assert path_convergence(steps_of(*tools), REFERENCE) == 0.0


def test_no_path_in_the_reference_scores_zero_even_for_a_direct_run() -> None:
    # A -> B   C -> D : no path from A to D
    broken = ToolGraph(edges=[("A", "B"), ("C", "D")], start="A", end="D")
    assert minimum_steps(broken) is None
    assert path_convergence(steps_of("A", "D"), broken) == 0.0


def test_start_equal_to_end() -> None:
    same = ToolGraph(edges=[], start="A", end="A")
    assert minimum_steps(same) == 0
    assert actual_steps(steps_of("X", "A", "B"), "A", "A") == 0
    assert path_convergence(steps_of("X", "A", "B"), same) == 1.0
    assert path_convergence(steps_of("X", "B"), same) == 0.0


def test_not_applicable_without_reference_or_steps() -> None:
    assert path_convergence(steps_of("A", "D"), None) is None
    assert path_convergence([], REFERENCE) is None


def test_reference_graph_always_holds_start_and_end() -> None:
    graph = reference_graph(ToolGraph(edges=[], start="A", end="D"))
    assert set(graph.nodes) == {"A", "D"}
    assert graph.number_of_edges() == 0


@given(steps=steps_st, reference=reference_st)
def test_in_unit_interval_or_none(steps: list[TraceStep], reference: ToolGraph) -> None:
    value = path_convergence(steps, reference)
    assert (value is None) == (not steps)
    assert value is None or 0.0 <= value <= 1.0


@given(
    steps=steps_st,
    reference=reference_st,
    detour=st.sampled_from([*TOOLS, "detour"]),
    position=st.integers(min_value=0),
)
def test_a_wasted_detour_never_raises_convergence(
    steps: list[TraceStep], reference: ToolGraph, detour: str, position: int
) -> None:
    assume(detour not in (reference.start, reference.end))
    before = path_convergence(steps, reference)
    at = position % (len(steps) + 1)
    longer = [*steps[:at], TraceStep(tool=detour), *steps[at:]]
    after = path_convergence(longer, reference)
    assert after is not None
    assert before is None or after <= before


@given(reference=reference_st)
def test_following_a_shortest_path_scores_one(reference: ToolGraph) -> None:
    graph = reference_graph(reference)
    assume(nx.has_path(graph, reference.start, reference.end))
    path = nx.shortest_path(graph, reference.start, reference.end)
    assert path_convergence(steps_of(*path), reference) == 1.0
