"""Path convergence (spec 001, tier 3): how directly the run went from start to end."""

from __future__ import annotations

from collections.abc import Sequence

import networkx as nx

from evalq.core.schemas import ToolGraph, TraceStep
from evalq.metrics.graph.build import reference_graph


def minimum_steps(reference: ToolGraph) -> int | None:
    """Edges on a shortest path from ``reference.start`` to ``reference.end``; None if none."""
    try:
        length: int = nx.shortest_path_length(
            reference_graph(reference), reference.start, reference.end
        )
    except nx.NetworkXNoPath:
        return None
    return length


def actual_steps(steps: Sequence[TraceStep], start: str, end: str) -> int | None:
    """Transitions the run took from its first call of ``start`` to its first ``end`` after it.

    With ``i`` the index of the first step whose tool is ``start`` and ``j >= i`` the index of
    the first step from ``i`` on whose tool is ``end``, the answer is ``j - i``. It is 0 when
    ``start == end``. None when the run never calls ``start``, or never calls ``end`` after it.
    """
    tools = [step.tool for step in steps]
    try:
        first = tools.index(start)
        last = tools.index(end, first)
    except ValueError:
        return None
    return last - first


def path_convergence(steps: Sequence[TraceStep], reference: ToolGraph | None) -> float | None:
    """``minimum_steps / actual_steps``, clipped to [0, 1].

    Args:
        steps: the run's tool calls, in order.
        reference: the task's reference tool graph.

    Returns:
        None without a reference graph or without steps (not applicable). 0.0 when the reference
        has no path from start to end, or the run never goes from start to end (spec 001: no
        valid path). 1.0 when start == end and the run called it. Otherwise the ratio, at most
        1.0 even if the run took a shortcut the reference graph does not contain.
    """
    if reference is None or not steps:
        return None
    minimum = minimum_steps(reference)
    actual = actual_steps(steps, reference.start, reference.end)
    if minimum is None or actual is None:
        return 0.0
    if actual == 0:  # only possible when start == end, where minimum == 0 too
        return 1.0
    return min(1.0, minimum / actual)
