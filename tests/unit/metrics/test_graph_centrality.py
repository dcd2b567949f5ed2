"""Coordination centrality: mean of betweenness, closeness and degree centrality per agent."""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.unit.metrics.test_graph_strategies import messages_st, steps_st

from evalq.core.schemas import AgentMessage, TraceStep
from evalq.metrics.graph import (
    centrality_scores,
    coordination_centrality,
    coordination_hub,
)


def msg(sender: str, receiver: str) -> AgentMessage:
    return AgentMessage(sender=sender, receiver=receiver, type="task_request")


def test_three_agents_hand_computed() -> None:
    #   coder <-> planner ---> reviewer        n = 3
    #
    # degree (in + out) / (2 (n-1)):  coder 2/4, planner 3/4, reviewer 1/4
    # betweenness / ((n-1)(n-2) = 2): only coder -> reviewer passes a node (planner): 1/2
    # closeness (incoming): coder  reached by planner at 1            -> 1/1 * 1/2 = 1/2
    #                       planner reached by coder at 1             -> 1/1 * 1/2 = 1/2
    #                       reviewer by planner at 1 and coder at 2   -> 2/3 * 2/2 = 2/3
    scores = coordination_centrality(
        [msg("planner", "coder"), msg("coder", "planner"), msg("planner", "reviewer")]
    )
    assert scores == pytest.approx(
        {
            "coder": (0 + 1 / 2 + 2 / 4) / 3,
            "planner": (1 / 2 + 1 / 2 + 3 / 4) / 3,
            "reviewer": (0 + 2 / 3 + 1 / 4) / 3,
        }
    )
    hub = coordination_hub(scores)
    assert hub is not None
    assert hub[0] == "planner"
    assert hub[1] == pytest.approx(1.75 / 3)


def test_star_hub_scores_one() -> None:
    #        l1
    #        ^|
    #        |v
    #  l2 <-> hub <-> l3       n = 4
    # hub: degree 6/6, betweenness 6 leaf pairs / 6, closeness 3/3 * 3/3  -> 1
    # leaf: degree 2/6, betweenness 0, closeness reached at 1, 2, 2: 3/5 * 3/3
    messages = [msg("hub", leaf) for leaf in ("l1", "l2", "l3")]
    messages += [msg(leaf, "hub") for leaf in ("l1", "l2", "l3")]
    scores = coordination_centrality(messages)
    assert scores["hub"] == pytest.approx(1.0)
    assert scores["l1"] == pytest.approx((1 / 3 + 0 + 3 / 5) / 3)
    assert coordination_hub(scores) == ("hub", scores["hub"])


def test_handoffs_between_steps_are_interactions() -> None:
    #   alice ---> bob       (bob's step follows alice's; no messages)
    # alice: degree 1/2, closeness 0 (nobody reaches her); bob: degree 1/2, closeness 1
    steps = [TraceStep(tool="plan", agent="alice"), TraceStep(tool="write", agent="bob")]
    assert coordination_centrality([], steps) == pytest.approx(
        {"alice": (0 + 0 + 1 / 2) / 3, "bob": (0 + 1 + 1 / 2) / 3}
    )


def test_agents_that_never_interact_score_zero() -> None:
    # alice only talks to herself; bob only works: two isolated nodes
    scores = coordination_centrality([msg("alice", "alice")], [TraceStep(tool="t", agent="bob")])
    assert scores == {"alice": 0.0, "bob": 0.0}


def test_fewer_than_two_agents_is_not_applicable() -> None:
    assert coordination_centrality([]) == {}
    assert coordination_centrality([msg("solo", "solo")]) == {}
    assert coordination_centrality([], [TraceStep(tool="t", agent="solo")]) == {}
    assert coordination_hub({}) is None


def test_hub_ties_go_to_the_first_name() -> None:
    assert coordination_hub({"b": 0.5, "a": 0.5, "c": 0.1}) == ("a", 0.5)


def networkx_reference(graph: nx.DiGraph) -> dict[str, float]:
    """Spec 001's formula on networkx, with the directed degree halved (docs/scoring/tier3.md)."""
    betweenness = nx.betweenness_centrality(graph)
    closeness = nx.closeness_centrality(graph)
    degree = nx.degree_centrality(graph)
    return {n: (betweenness[n] + closeness[n] + degree[n] / 2) / 3 for n in graph}


@given(
    edges=st.lists(
        st.tuples(st.integers(0, 11), st.integers(0, 11)).filter(lambda e: e[0] != e[1]),
        max_size=60,
    ),
    isolated=st.integers(0, 3),
)
@settings(max_examples=200)
def test_matches_networkx(edges: list[tuple[int, int]], isolated: int) -> None:
    graph = nx.DiGraph()
    graph.add_nodes_from(f"x{i}" for i in range(isolated))
    graph.add_edges_from((f"n{u}", f"n{v}") for u, v in edges)
    if graph.number_of_nodes() < 2:
        assert centrality_scores(graph) == {}
        return
    assert centrality_scores(graph) == pytest.approx(networkx_reference(graph), abs=1e-12)


def test_matches_networkx_on_a_larger_graph_over_several_source_blocks() -> None:
    # 150 nodes: three blocks of 64 sources; a ring plus chords gives long and short paths
    graph = nx.DiGraph()
    graph.add_edges_from((f"a{i}", f"a{(i + 1) % 150}") for i in range(150))
    graph.add_edges_from((f"a{i}", f"a{(i * 7 + 3) % 150}") for i in range(0, 150, 5))
    graph.remove_edges_from(nx.selfloop_edges(graph))
    assert centrality_scores(graph) == pytest.approx(networkx_reference(graph), abs=1e-12)


@given(messages=messages_st, steps=steps_st)
def test_every_score_in_unit_interval(messages: list[AgentMessage], steps: list[TraceStep]) -> None:
    scores = coordination_centrality(messages, steps)
    assert all(0.0 <= value <= 1.0 + 1e-12 for value in scores.values())
