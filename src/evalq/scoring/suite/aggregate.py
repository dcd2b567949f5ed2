"""Suite-level metrics over the scenarios of one run (spec 004, "Suite-level aggregation")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

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


@dataclass(frozen=True)
class ScenarioFacts:
    """What the suite metrics need of one scenario, computed once (`scenario_facts`).

    A bootstrap resample of a run's scenarios (`evalq.scoring.suite.resample`) aggregates these
    again and again; the aggregation never looks at ids, so a scenario drawn twice counts twice.
    """

    category: str
    score: float
    passed: bool
    weight: float
    expects_behaviors: bool
    correct_outputs: int | None
    total_outputs: int | None
    true_positives: int | None
    false_positives: int | None
    false_negatives: int | None
    latency_ms: float | None
    tokens_used: int | None


def scenario_facts(s: ScenarioResult, profile: SuiteProfile) -> ScenarioFacts:
    """The facts of one scenario under ``profile`` (its score, pass, weight and counts)."""
    return ScenarioFacts(
        category=s.category,
        score=scenario_score(s),
        passed=scenario_passed(s, profile),
        weight=scenario_weight(s, profile),
        expects_behaviors=behavior_counts(s)[1] > 0,
        correct_outputs=s.correct_outputs,
        total_outputs=s.total_outputs,
        true_positives=s.true_positives,
        false_positives=s.false_positives,
        false_negatives=s.false_negatives,
        latency_ms=s.latency_ms,
        tokens_used=s.tokens_used,
    )


def suite_metrics(scenarios: Sequence[ScenarioResult], profile: SuiteProfile) -> SuiteMetrics:
    """Aggregate ``scenarios`` (unique ids) into `SuiteMetrics` with ``profile``'s weights."""
    ids = [s.id for s in scenarios]
    if len(ids) != len(set(ids)):
        raise ValueError("scenario ids must be unique")
    facts = [scenario_facts(s, profile) for s in scenarios]
    scores = {s.id: f.score for s, f in zip(scenarios, facts, strict=True)}
    return replace(aggregate(facts, profile), scenario_scores=scores)


def aggregate(facts: Sequence[ScenarioFacts], profile: SuiteProfile) -> SuiteMetrics:
    """`SuiteMetrics` of scenarios given by their facts; ``scenario_scores`` is left empty
    (it is keyed by id, which facts do not carry: `suite_metrics` fills it)."""
    # keyed by position: a resample may hold one scenario twice, and each draw counts
    passed = {str(i): f.passed for i, f in enumerate(facts)}
    weights = {str(i): f.weight for i, f in enumerate(facts)}
    coverage_scores = {str(i): f.score for i, f in enumerate(facts) if f.expects_behaviors}
    adversarial = [f for f in facts if f.category == "adversarial"]
    reporting = [f for f in facts if f.total_outputs is not None]
    tp = _pooled([f.true_positives for f in facts])
    with_tokens = [f for f in facts if f.tokens_used is not None]
    p95 = latency_p95([f.latency_ms for f in facts if f.latency_ms is not None])
    categories: dict[str, list[bool]] = {}
    for f in facts:
        categories.setdefault(f.category, []).append(f.passed)
    return SuiteMetrics(
        scenario_count=len(facts),
        passed_count=sum(passed.values()),
        pass_rate=metrics.pass_rate(sum(passed.values()), len(facts)),
        weighted_pass_rate=weighted_mean({i: float(p) for i, p in passed.items()}, weights).value,
        accuracy=metrics.accuracy(
            _pooled([f.correct_outputs for f in reporting]),
            _pooled([f.total_outputs for f in reporting]),
        ),
        precision=metrics.precision(tp, _pooled([f.false_positives for f in facts])),
        recall=metrics.recall(tp, _pooled([f.false_negatives for f in facts])),
        safety_rate=metrics.safety_rate(sum(f.passed for f in adversarial), len(adversarial)),
        behavior_coverage=(
            sum(coverage_scores.values()) / len(coverage_scores) if coverage_scores else None
        ),
        weighted_coverage=weighted_mean(
            coverage_scores, {i: weights[i] for i in coverage_scores}
        ).value,
        latency_p95_ms=p95,
        normalized_latency=normalized_latency(p95, profile.latency_budget_ms),
        token_efficiency=metrics.token_efficiency(
            sum(f.score for f in with_tokens), _pooled([f.tokens_used for f in with_tokens])
        ),
        category_pass_rates={c: sum(p) / len(p) for c, p in categories.items()},
        scenario_scores={},
    )
