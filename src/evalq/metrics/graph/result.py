"""All tier-3 metrics of one submission, computed from its trace and its task."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from evalq.metrics.graph.balance import task_distribution_balance
from evalq.metrics.graph.build import agents_of
from evalq.metrics.graph.centrality import coordination_centrality, coordination_hub
from evalq.metrics.graph.composite import (
    COORDINATION_QUALITY_WEIGHTS,
    TOOL_EFFICIENCY_WEIGHTS,
    coordination_quality,
    tool_efficiency,
)
from evalq.metrics.graph.overhead import communication_overhead
from evalq.metrics.graph.path import path_convergence
from evalq.metrics.graph.tools import tool_selection_accuracy
from evalq.schemas import Task, Trace


@dataclass(frozen=True)
class GraphMetrics:
    """Tier-3 metrics; None means not applicable (the inputs were absent), never 0.

    Attributes:
        path_convergence: minimum / actual steps from the reference start to end, in [0, 1].
        tool_selection_accuracy: share of judged steps that used the context's optimal tool.
        communication_overhead: coordination messages / all messages (lower is better).
        coordination_centrality: agent -> mean of betweenness, closeness, degree centrality.
        central_agent: the agent with the highest centrality.
        max_coordination_centrality: that agent's centrality (the scalar summary).
        task_distribution_balance: 1 - stdev / mean of the per-agent step counts, >= 0.
        tool_efficiency: PeerRead composite input (docs/scoring/tier3.md).
        coordination_quality: PeerRead composite input (docs/scoring/tier3.md).
    """

    path_convergence: float | None = None
    tool_selection_accuracy: float | None = None
    communication_overhead: float | None = None
    coordination_centrality: Mapping[str, float] = field(
        default_factory=lambda: MappingProxyType({})
    )
    central_agent: str | None = None
    max_coordination_centrality: float | None = None
    task_distribution_balance: float | None = None
    tool_efficiency: float | None = None
    coordination_quality: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form (plain floats, strings, None and a dict of floats)."""
        return {
            "path_convergence": self.path_convergence,
            "tool_selection_accuracy": self.tool_selection_accuracy,
            "communication_overhead": self.communication_overhead,
            "coordination_centrality": dict(sorted(self.coordination_centrality.items())),
            "central_agent": self.central_agent,
            "max_coordination_centrality": self.max_coordination_centrality,
            "task_distribution_balance": self.task_distribution_balance,
            "tool_efficiency": self.tool_efficiency,
            "coordination_quality": self.coordination_quality,
        }


def graph_metrics(
    trace: Trace | None,
    task: Task,
    *,
    tool_efficiency_weights: Mapping[str, float] = TOOL_EFFICIENCY_WEIGHTS,
    coordination_quality_weights: Mapping[str, float] = COORDINATION_QUALITY_WEIGHTS,
) -> GraphMetrics:
    """Every tier-3 metric of a trace against its task's reference graph and optimal tools.

    Args:
        trace: the submission's trace; None gives a result with every metric None.
        task: supplies ``reference_tool_graph`` and ``optimal_tools``.
        tool_efficiency_weights: parts of `tool_efficiency`.
        coordination_quality_weights: parts of `coordination_quality`.
    """
    if trace is None:
        return GraphMetrics()
    steps, messages = trace.steps, trace.messages
    convergence = path_convergence(steps, task.reference_tool_graph)
    accuracy = tool_selection_accuracy(steps, task.optimal_tools)
    overhead = communication_overhead(messages)
    centrality = coordination_centrality(messages, steps)
    hub = coordination_hub(centrality)
    balance = task_distribution_balance(steps)
    return GraphMetrics(
        path_convergence=convergence,
        tool_selection_accuracy=accuracy,
        communication_overhead=overhead,
        coordination_centrality=MappingProxyType(centrality),
        central_agent=None if hub is None else hub[0],
        max_coordination_centrality=None if hub is None else hub[1],
        task_distribution_balance=balance,
        tool_efficiency=tool_efficiency(convergence, accuracy, tool_efficiency_weights),
        coordination_quality=coordination_quality(
            communication_overhead=overhead,
            task_distribution_balance=balance,
            coordination_centrality=None if hub is None else hub[1],
            agent_count=len(agents_of(steps, messages)),
            weights=coordination_quality_weights,
        ),
    )
