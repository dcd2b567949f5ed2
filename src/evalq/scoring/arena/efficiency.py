"""Efficiency score (spec 000, "Efficiency Score"): tokens, tool calls and iterations."""

from __future__ import annotations

from dataclasses import dataclass

from evalq.core.errors import InvalidInput
from evalq.core.profile import ArenaProfile
from evalq.core.weights import weighted_mean
from evalq.scoring.arena.baseline import Baseline
from evalq.scoring.arena.run import ArenaRun
from evalq.scoring.arena.scale import clamp_score, range_position

FIRST_TRY = 100.0
"""Iteration score of a run that needed a single iteration."""
WITHIN_MEDIAN_STEP = 15.0
"""Points lost per extra iteration while at or below the task's median (spec 000)."""
WITHIN_MEDIAN_FLOOR = 50.0
"""Lowest iteration score at or below the median, and the start above it (spec 000)."""
ABOVE_MEDIAN_STEP = 10.0
"""Points lost per iteration above the task's median (spec 000)."""


@dataclass(frozen=True)
class EfficiencyResult:
    """The combined efficiency score and its three parts, each in [0, 100]."""

    score: float
    tokens: float
    tool_calls: float
    iterations: float


def token_score(run: ArenaRun, baseline: Baseline) -> float:
    """``100 * (max - tokens) / (max - min)`` over the baseline's token range; 100 at or below
    the minimum, 0 at or above the maximum (see `range_position` for a zero-width range)."""
    return 100.0 * range_position(run.total_tokens, baseline.min_tokens, baseline.max_tokens)


def tool_call_score(run: ArenaRun, baseline: Baseline) -> float:
    """``100 * (max - calls) / (max - min)`` over the baseline's tool-call range, as tokens."""
    return 100.0 * range_position(run.tool_calls, baseline.min_tool_calls, baseline.max_tool_calls)


def iteration_score(run: ArenaRun, baseline: Baseline) -> float:
    """Spec 000's iteration score, clamped to [0, 100].

    1 iteration -> 100; up to the median m -> ``max(50, 100 - 15 (i - 1))``; above it ->
    ``max(0, 50 - 10 (i - m))``. Iterations are at least 1 (`ArenaRun` enforces it), which
    removes the spec's 115 at i = 0.
    """
    i = run.iterations
    median = baseline.median_iterations
    if i == 1:
        score = FIRST_TRY
    elif i <= median:
        score = max(WITHIN_MEDIAN_FLOOR, FIRST_TRY - (i - 1) * WITHIN_MEDIAN_STEP)
    else:
        score = max(0.0, WITHIN_MEDIAN_FLOOR - (i - median) * ABOVE_MEDIAN_STEP)
    return clamp_score(score)


def efficiency_score(run: ArenaRun, baseline: Baseline, profile: ArenaProfile) -> EfficiencyResult:
    """Weighted mean of the token, tool-call and iteration scores.

    Weights are ``profile.efficiency_weights`` (keys ``tokens``, ``tool_calls``, ``iterations``;
    spec 0.5 / 0.3 / 0.2) divided by their sum.

    Raises:
        InvalidInput: the profile gives none of the three parts a positive weight.
    """
    parts = {
        "tokens": token_score(run, baseline),
        "tool_calls": tool_call_score(run, baseline),
        "iterations": iteration_score(run, baseline),
    }
    combined = weighted_mean(parts, profile.efficiency_weights).value
    if combined is None:
        raise InvalidInput(
            [
                (
                    "profile.arena.efficiency_weights",
                    f"needs a positive weight on one of {list(parts)}",
                )
            ]
        )
    return EfficiencyResult(
        score=clamp_score(combined),
        tokens=parts["tokens"],
        tool_calls=parts["tool_calls"],
        iterations=parts["iterations"],
    )
