"""Graphs read from an execution trace: tool transitions, agent interactions, the reference.

The trace format is described in docs/trace-format.md. Node names are the tool and agent names
exactly as the trace spells them.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import networkx as nx

from evalq.core.schemas import AgentMessage, ToolGraph, TraceStep


@dataclass(frozen=True)
class Handoff:
    """Work passing from one agent to another between two attributed steps.

    Attributes:
        step: 0-based index of the first step the receiving agent performed.
        sender: the agent of the previous step that named an agent.
        receiver: the agent of step ``step``.
    """

    step: int
    sender: str
    receiver: str


def handoffs(steps: Sequence[TraceStep]) -> list[Handoff]:
    """The implicit handoffs of a trace: each change of agent between attributed steps.

    Steps without an agent are skipped, so ``A, (none), B`` is one handoff A -> B.
    """
    found: list[Handoff] = []
    previous: str | None = None
    for index, step in enumerate(steps):
        if step.agent is None:
            continue
        if previous is not None and step.agent != previous:
            found.append(Handoff(index, previous, step.agent))
        previous = step.agent
    return found


def agents_of(steps: Sequence[TraceStep], messages: Sequence[AgentMessage]) -> set[str]:
    """Every agent named by a step, or as a message's sender or receiver."""
    names = {step.agent for step in steps if step.agent is not None}
    return names | {m.sender for m in messages} | {m.receiver for m in messages}


def tool_transition_graph(steps: Sequence[TraceStep]) -> nx.DiGraph:
    """Tools as nodes, an edge ``a -> b`` when a call of ``b`` directly followed a call of ``a``.

    Edge attribute ``count`` is how often that transition happened; a tool called twice in a row
    is a self-loop.
    """
    graph = nx.DiGraph()
    graph.add_nodes_from(step.tool for step in steps)
    for before, after in itertools.pairwise(steps):
        if graph.has_edge(before.tool, after.tool):
            graph.edges[before.tool, after.tool]["count"] += 1
        else:
            graph.add_edge(before.tool, after.tool, count=1)
    return graph


def agent_interaction_graph(
    steps: Sequence[TraceStep], messages: Sequence[AgentMessage]
) -> nx.DiGraph:
    """Agents as nodes, an edge ``a -> b`` when ``a`` messaged ``b`` or handed work to ``b``.

    Every agent of the trace is a node, including one that never interacted (it is isolated).
    Edge attributes ``messages`` and ``handoffs`` count the two kinds of interaction. A message an
    agent sends to itself is not an interaction and adds no edge.
    """
    graph = nx.DiGraph()
    graph.add_nodes_from(sorted(agents_of(steps, messages)))
    pairs = [(m.sender, m.receiver, "messages") for m in messages]
    pairs += [(h.sender, h.receiver, "handoffs") for h in handoffs(steps)]
    for sender, receiver, kind in pairs:
        if sender == receiver:
            continue
        if not graph.has_edge(sender, receiver):
            graph.add_edge(sender, receiver, messages=0, handoffs=0)
        graph.edges[sender, receiver][kind] += 1
    return graph


def reference_graph(reference: ToolGraph) -> nx.DiGraph:
    """The task's reference tool graph, with its start and end always present as nodes."""
    graph = nx.DiGraph()
    graph.add_nodes_from((reference.start, reference.end))
    graph.add_edges_from(reference.edges)
    return graph
