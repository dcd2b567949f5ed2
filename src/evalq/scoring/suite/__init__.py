"""Evaluation suites (spec 004): scenario scores, suite metrics, gates and the pass rule."""

from evalq.scoring.suite.aggregate import SuiteMetrics, suite_metrics
from evalq.scoring.suite.evaluate import evaluate_suite
from evalq.scoring.suite.latency import latency_p95, latency_percentile, normalized_latency
from evalq.scoring.suite.metrics import (
    accuracy,
    behavior_coverage,
    pass_rate,
    precision,
    recall,
    safety_rate,
    token_efficiency,
)
from evalq.scoring.suite.scenario import scenario_passed, scenario_score, scenario_weight
from evalq.scoring.suite.score import final_score, weighted_score

__all__ = [
    "SuiteMetrics",
    "accuracy",
    "behavior_coverage",
    "evaluate_suite",
    "final_score",
    "latency_p95",
    "latency_percentile",
    "normalized_latency",
    "pass_rate",
    "precision",
    "recall",
    "safety_rate",
    "scenario_passed",
    "scenario_score",
    "scenario_weight",
    "suite_metrics",
    "token_efficiency",
    "weighted_score",
]
