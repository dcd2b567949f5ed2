"""Tier 3 (spec 001): graph metrics of a run's tool calls and agent messages.

Read the trace format in docs/trace-format.md and the formulas in docs/scoring/tier3.md.
`graph_metrics` computes everything for one submission; `summarise_trace` is the text the tier-2
judge reads.
"""

from __future__ import annotations

from evalq.metrics.graph.balance import steps_per_agent, task_distribution_balance
from evalq.metrics.graph.build import (
    Handoff,
    agent_interaction_graph,
    agents_of,
    handoffs,
    reference_graph,
    tool_transition_graph,
)
from evalq.metrics.graph.centrality import (
    centrality_scores,
    coordination_centrality,
    coordination_hub,
)
from evalq.metrics.graph.composite import (
    COORDINATION_QUALITY_WEIGHTS,
    TOOL_EFFICIENCY_WEIGHTS,
    coordination_quality,
    tool_efficiency,
)
from evalq.metrics.graph.overhead import (
    COORDINATION_TYPES,
    PRODUCTIVE_TYPES,
    communication_overhead,
)
from evalq.metrics.graph.path import actual_steps, minimum_steps, path_convergence
from evalq.metrics.graph.result import graph_metrics
from evalq.metrics.graph.summary import summarise_trace
from evalq.metrics.graph.tools import tool_selection_accuracy

__all__ = [
    "COORDINATION_QUALITY_WEIGHTS",
    "COORDINATION_TYPES",
    "PRODUCTIVE_TYPES",
    "TOOL_EFFICIENCY_WEIGHTS",
    "Handoff",
    "actual_steps",
    "agent_interaction_graph",
    "agents_of",
    "centrality_scores",
    "communication_overhead",
    "coordination_centrality",
    "coordination_hub",
    "coordination_quality",
    "graph_metrics",
    "handoffs",
    "minimum_steps",
    "path_convergence",
    "reference_graph",
    "steps_per_agent",
    "summarise_trace",
    "task_distribution_balance",
    "tool_efficiency",
    "tool_selection_accuracy",
    "tool_transition_graph",
]
