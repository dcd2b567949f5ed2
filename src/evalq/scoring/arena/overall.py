"""Overall Arena score (spec 000, "Overall Score Calculation", "Task-Specific Customizations")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evalq.core.errors import InvalidInput
from evalq.core.profile import ArenaProfile
from evalq.core.schemas import Evidence, Task
from evalq.core.weights import weighted_mean
from evalq.scoring.arena.baseline import Baseline
from evalq.scoring.arena.correctness import CriterionOutcome, correctness_score
from evalq.scoring.arena.cost import cost_score
from evalq.scoring.arena.efficiency import efficiency_score
from evalq.scoring.arena.run import ArenaRun
from evalq.scoring.arena.scale import clamp_score
from evalq.scoring.arena.speed import speed_score

DIMENSIONS = ("efficiency", "speed", "cost", "correctness")
"""The four Arena dimensions, in the spec's order."""
NO_ADJUSTMENT = 1.0
"""Difficulty factor of a difficulty the profile does not list (the spec's default)."""
DECIMALS = 2
"""Scores are rounded to this many decimals in `ArenaScore.to_dict` only."""


@dataclass(frozen=True)
class ArenaScore:
    """The Arena evaluation of one run. Every score is in [0, 100] and unrounded.

    Attributes:
        submission_id: the run's submission.
        task_id: its task.
        overall: weighted score after the difficulty adjustment.
        unadjusted: weighted score before it.
        efficiency, speed, cost, correctness: the four dimension scores.
        token_score, tool_call_score, iteration_score: the parts of ``efficiency``.
        weights: the dimension weights used, divided by their sum.
        difficulty_factor: the multiplier applied to ``unadjusted``.
        not_reported: dimensions scored 0 (the worst value) because the run lacked the figure
            (``speed`` and/or ``cost``).
        criteria: each success criterion's outcome.
        baseline_is_default: the baseline came from the profile's defaults.
    """

    submission_id: str
    task_id: str
    overall: float
    unadjusted: float
    efficiency: float
    speed: float
    cost: float
    correctness: float
    token_score: float
    tool_call_score: float
    iteration_score: float
    weights: Mapping[str, float] = field(hash=False)
    difficulty_factor: float
    not_reported: tuple[str, ...]
    criteria: tuple[CriterionOutcome, ...]
    baseline_is_default: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form in the spec's key names, scores rounded to two decimals."""
        return {
            "submission_id": self.submission_id,
            "task_id": self.task_id,
            "overall_score": round(self.overall, DECIMALS),
            "unadjusted_score": round(self.unadjusted, DECIMALS),
            "efficiency_score": round(self.efficiency, DECIMALS),
            "speed_score": round(self.speed, DECIMALS),
            "cost_score": round(self.cost, DECIMALS),
            "correctness_score": round(self.correctness, DECIMALS),
            "efficiency_breakdown": {
                "tokens": round(self.token_score, DECIMALS),
                "tool_calls": round(self.tool_call_score, DECIMALS),
                "iterations": round(self.iteration_score, DECIMALS),
            },
            "breakdown": {f"{name}_weight": w for name, w in self.weights.items()},
            "difficulty_factor": self.difficulty_factor,
            "not_reported": list(self.not_reported),
            "criteria": [
                {"type": c.type, "passed": c.passed, "reason": c.reason} for c in self.criteria
            ],
            "baseline_is_default": self.baseline_is_default,
        }


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


def score_run(
    run: ArenaRun, task: Task, evidence: Evidence, baseline: Baseline, profile: ArenaProfile
) -> ArenaScore:
    """Score one run on the four dimensions and combine them.

    ``unadjusted`` is the weighted mean of efficiency, speed, cost and correctness with the
    weights of `dimension_weights`. ``overall`` is ``min(100, unadjusted x factor)`` where the
    factor is ``profile.difficulty[task.difficulty]`` (1.0 when absent); the adjustment applies to
    the overall score only, so the dimension scores stay comparable across difficulties.

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
    return ArenaScore(
        submission_id=run.submission_id,
        task_id=run.task_id,
        overall=clamp_score(unadjusted * factor),
        unadjusted=unadjusted,
        efficiency=efficiency.score,
        speed=speed.score,
        cost=cost.score,
        correctness=correctness.score,
        token_score=efficiency.tokens,
        tool_call_score=efficiency.tool_calls,
        iteration_score=efficiency.iterations,
        weights=weights,
        difficulty_factor=factor,
        not_reported=tuple(
            name for name, result in (("speed", speed), ("cost", cost)) if result.not_reported
        ),
        criteria=correctness.outcomes,
        baseline_is_default=baseline.is_default,
    )
