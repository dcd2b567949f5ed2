"""All tier-3 metrics of one submission, computed from its trace and its task."""

from __future__ import annotations

from collections.abc import Mapping

from evalq.core.results import GraphResult
from evalq.core.schemas import Task, Trace
from evalq.core.trajectory import ToolCall
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
from evalq.metrics.graph.trajectory import trajectory_match


def graph_metrics(
    trace: Trace | None,
    task: Task,
    *,
    tool_efficiency_weights: Mapping[str, float] = TOOL_EFFICIENCY_WEIGHTS,
    coordination_quality_weights: Mapping[str, float] = COORDINATION_QUALITY_WEIGHTS,
) -> GraphResult:
    """Every tier-3 metric of a trace against its task's reference graph and optimal tools.

    Args:
        trace: the submission's trace; None gives a result with every metric None.
        task: supplies ``reference_tool_graph`` and ``optimal_tools``.
        tool_efficiency_weights: parts of `tool_efficiency`.
        coordination_quality_weights: parts of `coordination_quality`.
    """
    if trace is None:
        return GraphResult()
    steps, messages = trace.steps, trace.messages
    convergence = path_convergence(steps, task.reference_tool_graph)
    accuracy = tool_selection_accuracy(steps, task.optimal_tools)
    overhead = communication_overhead(messages)
    centrality = coordination_centrality(messages, steps)
    hub = coordination_hub(centrality)
    balance = task_distribution_balance(steps)
    trajectory = None
    if task.expected_tool_calls is not None:
        made = [ToolCall(tool=s.tool, arguments=s.arguments) for s in steps]
        trajectory = trajectory_match(made, task.expected_tool_calls, task.trajectory_mode)
    return GraphResult(
        path_convergence=convergence,
        tool_selection_accuracy=accuracy,
        communication_overhead=overhead,
        coordination_centrality=dict(sorted(centrality.items())),
        central_agent=None if hub is None else hub[0],
        max_coordination_centrality=None if hub is None else hub[1],
        task_distribution_balance=balance,
        tool_efficiency=tool_efficiency(
            convergence,
            accuracy,
            tool_efficiency_weights,
            trajectory_match=None if trajectory is None else trajectory.score,
        ),
        coordination_quality=coordination_quality(
            communication_overhead=overhead,
            task_distribution_balance=balance,
            coordination_centrality=None if hub is None else hub[1],
            agent_count=len(agents_of(steps, messages)),
            weights=coordination_quality_weights,
        ),
        trajectory=trajectory,
    )
