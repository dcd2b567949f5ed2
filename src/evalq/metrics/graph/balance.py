"""Task distribution balance (spec 001, tier 3): how evenly the agents shared the tool calls."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence

from evalq.core.schemas import TraceStep


def steps_per_agent(steps: Sequence[TraceStep]) -> dict[str, int]:
    """Number of steps each agent performed; steps without an agent are not counted."""
    return dict(Counter(step.agent for step in steps if step.agent is not None))


def task_distribution_balance(steps: Sequence[TraceStep]) -> float | None:
    """``1 - stdev / mean`` of the per-agent step counts, clamped to [0, 1].

    The standard deviation is the sample one (n - 1), as in spec 001. Only agents that performed
    at least one step count (an agent seen only in messages is not given a count of 0).

    Returns:
        None when no step names an agent (not applicable); 1.0 for a single agent (spec 001);
        otherwise the clamped score.
    """
    counts = list(steps_per_agent(steps).values())
    if not counts:
        return None
    if len(counts) == 1:
        return 1.0
    score = 1.0 - statistics.stdev(counts) / statistics.mean(counts)
    return max(0.0, score)
