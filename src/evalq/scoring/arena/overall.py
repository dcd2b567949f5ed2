"""Overall Arena score (spec 000, "Overall Score Calculation", "Task-Specific Customizations")."""

from __future__ import annotations

from evalq.core.errors import InvalidInput
from evalq.core.profile import ArenaProfile
from evalq.core.results import ArenaScores
from evalq.core.schemas import Evidence, Task
from evalq.core.weights import weighted_mean
from evalq.scoring.arena.baseline import Baseline
from evalq.scoring.arena.correctness import correctness_score
from evalq.scoring.arena.cost import cost_score
from evalq.scoring.arena.efficiency import efficiency_score
from evalq.scoring.arena.run import ArenaRun
from evalq.scoring.arena.scale import clamp_score
from evalq.scoring.arena.speed import speed_score

DIMENSIONS = ("efficiency", "speed", "cost", "correctness")
"""The four Arena dimensions, in the spec's order."""
NO_ADJUSTMENT = 1.0
"""Difficulty factor of a difficulty the profile does not list (the spec's default)."""


def dimension_weights(task: Task, profile: ArenaProfile) -> dict[str, float]:
    """The task category's weights (``profile.category_weights``), else ``profile.weights``,
    divided by their sum over the four dimensions.

    Raises:
        InvalidInput: no dimension has a positive weight.
    """
    raw = profile.weights
    if task.category is not None:
        raw = profile.category_weights.get(task.category, profile.weights)
    total = sum(max(0.0, raw.get(name, 0.0)) for name in DIMENSIONS)
    if total <= 0:
        raise InvalidInput([("profile.arena.weights", f"needs a positive weight on {DIMENSIONS}")])
    return {name: max(0.0, raw.get(name, 0.0)) / total for name in DIMENSIONS}


def score_arena_run(
    run: ArenaRun, task: Task, evidence: Evidence, baseline: Baseline, profile: ArenaProfile
) -> ArenaScores:
    """Score one run on the four dimensions and combine them, every score in [0, 100].

    The scores are returned unrounded (`ArenaScores` rounds them when written).
    ``unadjusted_score`` is the weighted mean of efficiency, speed, cost and correctness with the
    weights of `dimension_weights` (``breakdown``). ``overall_score`` is ``min(100, unadjusted x
    factor)`` where the factor is ``profile.difficulty[task.difficulty]`` (1.0 when absent); the
    adjustment applies to the overall score only, so the dimension scores stay comparable across
    difficulties.

    Raises:
        InvalidInput: the run belongs to another task, or the profile's weights are unusable.
    """
    if run.task_id != task.id:
        raise InvalidInput([("task_id", f"run is for {run.task_id!r}, task is {task.id!r}")])
    efficiency = efficiency_score(run, baseline, profile)
    speed = speed_score(run, baseline, profile)
    cost = cost_score(run, baseline, profile)
    correctness = correctness_score(task, evidence)
    weights = dimension_weights(task, profile)
    values: dict[str, float | None] = {
        "efficiency": efficiency.score,
        "speed": speed.score,
        "cost": cost.score,
        "correctness": correctness.score,
    }
    mean = weighted_mean(values, weights).value
    assert mean is not None  # dimension_weights guarantees a positive weight on a present value
    unadjusted = clamp_score(mean)
    factor = profile.difficulty.get(task.difficulty, NO_ADJUSTMENT)
    return ArenaScores(
        submission_id=run.submission_id,
        task_id=run.task_id,
        overall_score=clamp_score(unadjusted * factor),
        unadjusted_score=unadjusted,
        efficiency_score=efficiency.score,
        speed_score=speed.score,
        cost_score=cost.score,
        correctness_score=correctness.score,
        efficiency_breakdown={
            "tokens": efficiency.tokens,
            "tool_calls": efficiency.tool_calls,
            "iterations": efficiency.iterations,
        },
        breakdown={f"{name}_weight": w for name, w in weights.items()},
        difficulty_factor=factor,
        not_reported=tuple(
            name for name, result in (("speed", speed), ("cost", cost)) if result.not_reported
        ),
        criteria=correctness.outcomes,
        baseline_is_default=baseline.is_default,
    )
