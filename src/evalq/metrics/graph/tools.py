"""Tool selection accuracy (spec 001, tier 3): the right tool where the task says which."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from evalq.core.schemas import TraceStep


def tool_selection_accuracy(
    steps: Sequence[TraceStep], optimal_tools: Mapping[str, str] | None
) -> float | None:
    """Fraction of judged steps whose tool is the optimal tool for the step's context.

    A step is judged when its ``context`` is a key of ``optimal_tools``; other steps (no
    context, or a context the task does not rate) are left out of numerator and denominator.

    Args:
        steps: the run's tool calls.
        optimal_tools: context -> the tool that should be used there.

    Returns:
        correct / judged in [0, 1], or None when no step is judged (not applicable).
    """
    if not optimal_tools:
        return None
    judged = [step for step in steps if step.context is not None and step.context in optimal_tools]
    if not judged:
        return None
    correct = sum(1 for step in judged if step.tool == optimal_tools[step.context or ""])
    return correct / len(judged)
