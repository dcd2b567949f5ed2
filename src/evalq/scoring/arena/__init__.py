"""Agentic Arena scores (spec 000): efficiency, speed, cost, correctness against task baselines.

See docs/scoring/arena.md for every formula and each departure from the spec.
"""

from __future__ import annotations

from evalq.scoring.arena.baseline import Baseline, compute_baseline
from evalq.scoring.arena.correctness import (
    CorrectnessResult,
    check_criterion,
    correctness_score,
    evaluate_criterion,
)
from evalq.scoring.arena.cost import CostResult, cost_score
from evalq.scoring.arena.efficiency import (
    EfficiencyResult,
    efficiency_score,
    iteration_score,
    token_score,
    tool_call_score,
)
from evalq.scoring.arena.outliers import OutlierFlag, detect_outliers
from evalq.scoring.arena.overall import dimension_weights, score_arena_run
from evalq.scoring.arena.run import ArenaRun
from evalq.scoring.arena.speed import SpeedResult, speed_score
from evalq.scoring.arena.validation import validate_evaluation

__all__ = [
    "ArenaRun",
    "Baseline",
    "CorrectnessResult",
    "CostResult",
    "EfficiencyResult",
    "OutlierFlag",
    "SpeedResult",
    "check_criterion",
    "compute_baseline",
    "correctness_score",
    "cost_score",
    "detect_outliers",
    "dimension_weights",
    "efficiency_score",
    "evaluate_criterion",
    "iteration_score",
    "score_arena_run",
    "speed_score",
    "token_score",
    "tool_call_score",
    "validate_evaluation",
]
