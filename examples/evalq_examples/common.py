"""Builders shared by the example submissions: usage figures and timed traces."""

from __future__ import annotations

from typing import Any

# Typical seconds one call of a tool takes; the rest of a run's wall time is model thinking.
TOOL_SECONDS = {
    "list_files": 0.4,
    "grep": 0.6,
    "read_file": 0.3,
    "write_file": 0.2,
    "edit_file": 0.3,
    "run_build": 11.0,
    "run_tests": 17.5,
    "load_paper": 1.8,
    "extract_sections": 2.6,
    "search_related_work": 6.4,
    "web_search": 4.9,
    "check_claims": 5.2,
    "draft_review": 14.0,
    "critique_review": 7.5,
    "finalize_review": 3.1,
}


def usage(
    *,
    calls: int,
    iterations: int = 1,
    seconds: float | None = None,
    input_tokens: int | None = None,
    output_tokens: int | None = None,
    total_tokens: int | None = None,
    cost_usd: float | None = None,
) -> dict[str, Any]:
    """A `Usage` dict that leaves out every figure the run did not report."""
    figures: dict[str, Any] = {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "total_tokens": total_tokens,
        "tool_calls": calls,
        "iterations": iterations,
        "execution_time": seconds,
        "cost_usd": cost_usd,
    }
    return {key: value for key, value in figures.items() if value is not None}


def timed_steps(
    plan: list[tuple[str | None, str, str | None]], total_seconds: float
) -> list[dict[str, Any]]:
    """Turn ``(agent, tool, context)`` triples into trace steps that fill ``total_seconds``.

    Each call lasts its tool's typical duration; the remaining time is spread evenly as thinking
    time before each call. Timestamps are seconds from the start of the run, rounded to 0.1 s.
    """
    busy = sum(TOOL_SECONDS[tool] for _, tool, _ in plan)
    gap = max(0.0, total_seconds - busy) / max(1, len(plan))
    steps: list[dict[str, Any]] = []
    clock = 0.0
    for agent, tool, context in plan:
        clock += gap
        start = round(clock, 1)
        clock += TOOL_SECONDS[tool]
        step: dict[str, Any] = {"tool": tool, "started_at": start, "ended_at": round(clock, 1)}
        if agent is not None:
            step["agent"] = agent
        if context is not None:
            step["context"] = context
        steps.append(step)
    return steps


def plan_of(spec: str, agent: str | None = None) -> list[tuple[str | None, str, str | None]]:
    """Parse a compact single-agent plan: ``"tool:context tool tool:context"``."""
    plan: list[tuple[str | None, str, str | None]] = []
    for item in spec.split():
        tool, _, context = item.partition(":")
        plan.append((agent, tool, context or None))
    return plan


def tests_of(
    names: list[str], failing: set[int] | frozenset[int] = frozenset()
) -> list[dict[str, Any]]:
    """`TestResult` dicts for ``names``; the indices in ``failing`` failed."""
    return [{"name": name, "passed": i not in failing} for i, name in enumerate(names)]
