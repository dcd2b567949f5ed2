"""Graphs read from a trace: tool transitions, agent interactions, implicit handoffs."""

from __future__ import annotations

from evalq.core.schemas import AgentMessage, TraceStep
from evalq.metrics.graph import (
    Handoff,
    agent_interaction_graph,
    agents_of,
    handoffs,
    tool_transition_graph,
)


def step(tool: str, agent: str | None = None) -> TraceStep:
    return TraceStep(tool=tool, agent=agent)


def test_tool_transitions_count_repeats_and_self_loops() -> None:
    # search -> read -> read -> search -> read
    graph = tool_transition_graph([step(t) for t in ("search", "read", "read", "search", "read")])
    counts = {(u, v): data["count"] for u, v, data in graph.edges(data=True)}
    assert counts == {("search", "read"): 2, ("read", "read"): 1, ("read", "search"): 1}


def test_single_step_gives_a_node_without_edges() -> None:
    graph = tool_transition_graph([step("only")])
    assert list(graph.nodes) == ["only"]
    assert graph.number_of_edges() == 0


def test_handoffs_skip_unattributed_steps() -> None:
    steps = [step("a", "alice"), step("b"), step("c", "bob"), step("d", "bob"), step("e", "alice")]
    assert handoffs(steps) == [Handoff(2, "alice", "bob"), Handoff(4, "bob", "alice")]
    assert handoffs([step("a", "alice"), step("b", "alice")]) == []


def test_interaction_graph_merges_messages_and_handoffs() -> None:
    #  alice --msg x2, handoff--> bob      carol (only a message to herself: isolated node)
    steps = [step("plan", "alice"), step("write", "bob")]
    messages = [
        AgentMessage(sender="alice", receiver="bob", type="task_request"),
        AgentMessage(sender="alice", receiver="bob", type="coordination"),
        AgentMessage(sender="carol", receiver="carol", type="status_update"),
    ]
    graph = agent_interaction_graph(steps, messages)
    assert sorted(graph.nodes) == ["alice", "bob", "carol"]
    assert list(graph.edges(data=True)) == [("alice", "bob", {"messages": 2, "handoffs": 1})]
    assert agents_of(steps, messages) == {"alice", "bob", "carol"}
