"""The two tier-3 inputs of the PeerRead composite: tool efficiency and coordination quality.

Spec 001 names both as composite inputs but does not define them; these definitions are
evalq's (docs/scoring/tier3.md). Each is a weighted mean, renormalised over the parts present,
through `evalq.core.weights.weighted_mean`. The weights are parameters; the defaults below are
what a profile without a ``[graph]`` section means.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from evalq.core.weights import weighted_mean

TOOL_EFFICIENCY_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {"path_convergence": 1.0, "tool_selection_accuracy": 1.0}
)
"""Default parts of tool efficiency: the plain mean of the two tool metrics."""

COORDINATION_QUALITY_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {
        "communication_efficiency": 1.0,
        "task_distribution_balance": 1.0,
        "coordination_centrality": 0.0,
    }
)
"""Default parts of coordination quality. Centrality is descriptive (a strong hub may be a good
orchestrator or a bottleneck), so it is reported but weighs nothing unless a profile says so."""


def tool_efficiency(
    path_convergence: float | None,
    tool_selection_accuracy: float | None,
    weights: Mapping[str, float] = TOOL_EFFICIENCY_WEIGHTS,
    *,
    trajectory_match: float | None = None,
) -> float | None:
    """Weighted mean of path convergence and tool selection accuracy over those present, and
    of the trajectory match's score where the profile weighs ``trajectory_match`` (the default
    weights do not: a task's score moves only when its profile says so).

    Returns:
        A value in [0, 1], or None when no part is present (or every present part weighs 0).
    """
    parts = {
        "path_convergence": path_convergence,
        "tool_selection_accuracy": tool_selection_accuracy,
        "trajectory_match": trajectory_match,
    }
    return weighted_mean(parts, weights).value


def coordination_quality(
    *,
    communication_overhead: float | None,
    task_distribution_balance: float | None,
    coordination_centrality: float | None = None,
    agent_count: int,
    weights: Mapping[str, float] = COORDINATION_QUALITY_WEIGHTS,
) -> float | None:
    """Weighted mean of communication efficiency (1 - overhead), balance and centrality.

    Args:
        communication_overhead: coordination messages / all messages, or None.
        task_distribution_balance: the balance score, or None.
        coordination_centrality: the scalar summary (the hub's score), or None.
        agent_count: distinct agents in the trace (steps, senders, receivers).
        weights: part name -> weight; names as in `COORDINATION_QUALITY_WEIGHTS`.

    Returns:
        None for a run with fewer than two agents (nothing was coordinated, so the single-agent
        balance of 1.0 does not turn into a perfect coordination score) or with no part present;
        otherwise a value in [0, 1].
    """
    if agent_count < 2:
        return None
    efficiency = None if communication_overhead is None else 1.0 - communication_overhead
    parts = {
        "communication_efficiency": efficiency,
        "task_distribution_balance": task_distribution_balance,
        "coordination_centrality": coordination_centrality,
    }
    return weighted_mean(parts, weights).value
