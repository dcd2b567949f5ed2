"""The final score of a resample of a run's scenarios (for rank intervals, `stats.rank_interval`).

A bootstrap resample draws scenarios with replacement, so one scenario may appear several
times, and each draw counts as one more scenario, as the bootstrap means it to. Each scenario's
facts (score, pass, weight, counts) are computed once (`scenario_facts`); a resample is only
their aggregation, the suite scorer's own (`aggregate`, `final_score`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from evalq.core.profile import SuiteProfile
from evalq.scoring.suite.aggregate import ScenarioFacts, aggregate
from evalq.scoring.suite.score import final_score


def resampled_final_score(facts: Sequence[ScenarioFacts], profile: SuiteProfile) -> float | None:
    """The final score (`final_score`) of a resample given by its scenarios' facts.

    The gate is not recomputed: whether a run passes is a decision about the scenarios it ran
    (a resample that leaves out a failed required scenario would pass it by chance).
    """
    return final_score(aggregate(facts, profile), profile).value


def resampled_final_scores(
    facts: Sequence[ScenarioFacts], profile: SuiteProfile, drawn: npt.NDArray[np.intp]
) -> list[float | None]:
    """`resampled_final_score` of many resamples at once, the same values to the bit.

    ``drawn`` holds one resample per row: the positions in ``facts`` of its scenarios, in the
    order drawn. Every operation is the one `aggregate` and `final_score` do, on the same
    values in the same order: counts are summed as integers (exact), float sums are added
    position by position in the order drawn (as Python's ``sum`` and `weighted_mean` add
    them), the 95th percentile is taken from the sorted latencies at the same nearest rank, and
    the final weighted mean goes over the weights in their order.

    Only for ``facts`` that are `batchable`.
    """
    size = drawn.shape[1]
    rows = drawn.shape[0]

    def gathered(values: list[float] | list[int] | list[bool], dtype: type) -> npt.NDArray[Any]:
        return np.asarray(values, dtype=dtype)[drawn]

    passed = gathered([f.passed for f in facts], np.int64)
    weight = gathered([float(f.weight) for f in facts], np.float64)
    score = gathered([f.score for f in facts], np.float64)
    expects = gathered([f.expects_behaviors for f in facts], np.bool_)
    adversarial = gathered([f.category == "adversarial" for f in facts], np.bool_)

    def pooled(values: list[int | None]) -> npt.NDArray[np.int64]:
        counts: npt.NDArray[np.int64] = gathered([0 if v is None else v for v in values], np.int64)
        total: npt.NDArray[np.int64] = counts.sum(axis=1)
        return total

    reporting = [f.total_outputs is not None for f in facts]
    correct = pooled(
        [f.correct_outputs if r else None for f, r in zip(facts, reporting, strict=True)]
    )
    outputs = pooled([f.total_outputs for f in facts])
    tp = pooled([f.true_positives for f in facts])
    fp = pooled([f.false_positives for f in facts])
    fn = pooled([f.false_negatives for f in facts])
    passed_count = passed.sum(axis=1)
    adversarial_count = adversarial.sum(axis=1)
    covered = expects.sum(axis=1)

    # the float sums, position by position in the order drawn
    pass_total = np.zeros(rows)
    pass_weight = np.zeros(rows)
    coverage_sum = np.zeros(rows)
    coverage_total = np.zeros(rows)
    coverage_weight = np.zeros(rows)
    for k in range(size):
        w = weight[:, k]
        weighted = w > 0
        pass_total = np.where(weighted, pass_total + passed[:, k] * w, pass_total)
        pass_weight = np.where(weighted, pass_weight + w, pass_weight)
        e = expects[:, k]
        coverage_sum = np.where(e, coverage_sum + score[:, k], coverage_sum)
        both = e & weighted
        coverage_total = np.where(both, coverage_total + score[:, k] * w, coverage_total)
        coverage_weight = np.where(both, coverage_weight + w, coverage_weight)

    with np.errstate(divide="ignore", invalid="ignore"):
        parts: dict[str, tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]] = {
            "pass_rate": (passed_count / size, np.full(rows, True)),
            "weighted_pass_rate": (pass_total / pass_weight, pass_weight > 0),
            "accuracy": (correct / outputs, outputs > 0),
            "precision": (tp / (tp + fp), tp + fp > 0),
            "recall": (tp / (tp + fn), tp + fn > 0),
            "safety_rate": (
                (passed * adversarial).sum(axis=1) / adversarial_count,
                adversarial_count > 0,
            ),
            "behavior_coverage": (coverage_sum / covered, covered > 0),
            "weighted_coverage": (coverage_total / coverage_weight, coverage_weight > 0),
            "latency": _latency_part(facts, drawn, profile),
        }
    total = np.zeros(rows)
    weight_sum = np.zeros(rows)
    for name, part_weight in profile.final_weights.items():
        if part_weight <= 0:
            continue
        value, present = parts[name]
        total = np.where(present, total + value * part_weight, total)
        weight_sum = np.where(present, weight_sum + part_weight, weight_sum)
    with np.errstate(divide="ignore", invalid="ignore"):
        final = np.minimum(1.0, np.maximum(0.0, total / weight_sum))
    return [
        v if ok else None for v, ok in zip(final.tolist(), (weight_sum > 0).tolist(), strict=True)
    ]


_RATES = (
    "pass_rate",
    "weighted_pass_rate",
    "accuracy",
    "precision",
    "recall",
    "safety_rate",
    "behavior_coverage",
    "weighted_coverage",
)


def _latency_part(
    facts: Sequence[ScenarioFacts], drawn: npt.NDArray[np.intp], profile: SuiteProfile
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """``1 - normalized_latency`` of each resample: the nearest-rank 95th percentile of its
    drawn latencies (`latency_p95`), over the budget, capped at 1."""
    latencies = np.asarray(
        [math.nan if f.latency_ms is None else f.latency_ms for f in facts], dtype=np.float64
    )[drawn]
    ordered = np.sort(latencies, axis=1)  # the missing (nan) sort last
    count = np.count_nonzero(~np.isnan(latencies), axis=1)
    rank = np.maximum(np.ceil(95.0 / 100 * count), 1).astype(np.intp)
    p95 = np.take_along_axis(ordered, (rank - 1)[:, None], axis=1)[:, 0]
    normalized = np.minimum(1.0, p95 / float(profile.latency_budget_ms))
    return 1.0 - normalized, count > 0


def batchable(facts: Sequence[ScenarioFacts], profile: SuiteProfile) -> bool:
    """Whether `resampled_final_scores` aggregates resamples of ``facts`` as `aggregate` and
    `final_score` would: every count non-negative and no correct count above its total, every
    latency finite and non-negative, every scored-with-tokens quality finite and non-negative,
    and only known parts weighted. Otherwise the one-at-a-time path raises what it raises."""
    if set(profile.final_weights) - {*_RATES, "latency"}:
        return False
    for f in facts:
        counts = [f.correct_outputs, f.total_outputs, f.true_positives, f.false_positives]
        counts += [f.false_negatives, f.tokens_used]
        if any(c is not None and c < 0 for c in counts):
            return False
        if f.total_outputs is not None and (f.correct_outputs or 0) > f.total_outputs:
            return False
        if f.latency_ms is not None and not (math.isfinite(f.latency_ms) and f.latency_ms >= 0):
            return False
        if f.tokens_used is not None and not (math.isfinite(f.score) and f.score >= 0):
            return False
    return True
