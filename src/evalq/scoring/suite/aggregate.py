"""Suite-level metrics over the scenarios of one run (spec 004, "Suite-level aggregation")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evalq.core.profile import SuiteProfile
from evalq.core.schemas import ScenarioResult
from evalq.core.weights import weighted_mean
from evalq.scoring.suite import metrics
from evalq.scoring.suite.latency import latency_p95, normalized_latency
from evalq.scoring.suite.scenario import (
    behavior_counts,
    scenario_passed,
    scenario_score,
    scenario_weight,
)


@dataclass(frozen=True)
class SuiteMetrics:
    """Every metric of a suite; a rate with an empty denominator is None (not applicable).

    Attributes:
        scenario_count / passed_count: scenarios, and those that passed.
        pass_rate: passed / scenarios.
        weighted_pass_rate: the same with each scenario weighted by `scenario_weight`.
        accuracy: pooled correct outputs / pooled outputs of the scenarios reporting them.
        precision / recall: from the pooled true / false positives and false negatives.
        safety_rate: passed adversarial scenarios / adversarial scenarios.
        behavior_coverage: mean scenario score over the scenarios that expect behaviours (a
            must-not violation scores 0 there); weighted_coverage: the weighted mean.
        latency_p95_ms: nearest-rank 95th percentile of the scenarios' latencies.
        normalized_latency: ``min(1, p95 / profile.latency_budget_ms)``.
        token_efficiency: summed scenario scores / summed tokens of the scenarios with tokens.
        category_pass_rates: pass rate of each category present.
        scenario_scores: scenario id -> its score.
    """

    scenario_count: int
    passed_count: int
    pass_rate: float | None
    weighted_pass_rate: float | None
    accuracy: float | None
    precision: float | None
    recall: float | None
    safety_rate: float | None
    behavior_coverage: float | None
    weighted_coverage: float | None
    latency_p95_ms: float | None
    normalized_latency: float | None
    token_efficiency: float | None
    category_pass_rates: dict[str, float]
    scenario_scores: dict[str, float]

    def rates(self) -> dict[str, float | None]:
        """The fraction-valued metrics by name (what blocking / warning thresholds may name)."""
        return {
            "pass_rate": self.pass_rate,
            "weighted_pass_rate": self.weighted_pass_rate,
            "accuracy": self.accuracy,
            "precision": self.precision,
            "recall": self.recall,
            "safety_rate": self.safety_rate,
            "behavior_coverage": self.behavior_coverage,
            "weighted_coverage": self.weighted_coverage,
        }


def _pooled(values: Sequence[int | None]) -> int:
    return sum(v for v in values if v is not None)


def suite_metrics(scenarios: Sequence[ScenarioResult], profile: SuiteProfile) -> SuiteMetrics:
    """Aggregate ``scenarios`` (unique ids) into `SuiteMetrics` with ``profile``'s weights."""
    ids = [s.id for s in scenarios]
    if len(ids) != len(set(ids)):
        raise ValueError("scenario ids must be unique")
    scores = {s.id: scenario_score(s) for s in scenarios}
    passed = {s.id: scenario_passed(s, profile) for s in scenarios}
    weights = {s.id: scenario_weight(s, profile) for s in scenarios}
    with_behaviors = [s for s in scenarios if behavior_counts(s)[1] > 0]
    adversarial = [s for s in scenarios if s.category == "adversarial"]
    reporting = [s for s in scenarios if s.total_outputs is not None]
    tp = _pooled([s.true_positives for s in scenarios])
    with_tokens = [s for s in scenarios if s.tokens_used is not None]
    p95 = latency_p95([s.latency_ms for s in scenarios if s.latency_ms is not None])
    categories: dict[str, list[bool]] = {}
    for s in scenarios:
        categories.setdefault(s.category, []).append(passed[s.id])
    coverage_scores = {s.id: scores[s.id] for s in with_behaviors}
    return SuiteMetrics(
        scenario_count=len(scenarios),
        passed_count=sum(passed.values()),
        pass_rate=metrics.pass_rate(sum(passed.values()), len(scenarios)),
        weighted_pass_rate=weighted_mean({i: float(p) for i, p in passed.items()}, weights).value,
        accuracy=metrics.accuracy(
            _pooled([s.correct_outputs for s in reporting]),
            _pooled([s.total_outputs for s in reporting]),
        ),
        precision=metrics.precision(tp, _pooled([s.false_positives for s in scenarios])),
        recall=metrics.recall(tp, _pooled([s.false_negatives for s in scenarios])),
        safety_rate=metrics.safety_rate(sum(passed[s.id] for s in adversarial), len(adversarial)),
        behavior_coverage=(
            sum(coverage_scores.values()) / len(coverage_scores) if coverage_scores else None
        ),
        weighted_coverage=weighted_mean(
            coverage_scores, {i: weights[i] for i in coverage_scores}
        ).value,
        latency_p95_ms=p95,
        normalized_latency=normalized_latency(p95, profile.latency_budget_ms),
        token_efficiency=metrics.token_efficiency(
            sum(scores[s.id] for s in with_tokens), _pooled([s.tokens_used for s in with_tokens])
        ),
        category_pass_rates={c: sum(p) / len(p) for c, p in categories.items()},
        scenario_scores=scores,
    )
