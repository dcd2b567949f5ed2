"""Cross-variant (cross-tier) analysis of Scylla runs (spec 003, "Cross-Tier Metrics").

A *variant* is one configuration under test (T0, T1, ...); T0, or ``profile.baseline_variant``,
is the baseline that uplift is measured against.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from evalq.core.profile import ScyllaProfile
from evalq.core.results import ScyllaScores
from evalq.scoring.scylla import letter_grade
from evalq.stats.statistics import Statistics, population_variance, summarize


@dataclass(frozen=True)
class VariantStats:
    """Statistics of one variant's runs; a metric no run reported is None.

    Attributes:
        variant: the variant's name.
        runs: number of runs.
        pass_rate / impl_rate / composite / cost_usd / duration_seconds: statistics over the
            runs that reported the metric (``count`` says how many).
        grade: letter grade of the median composite.
        cost_of_pass: mean cost / mean pass rate of the runs with a cost (total dollars per
            pass; ``math.inf`` when none passed); None when no run has a cost.
        consistency: ``1 - std / mean`` of the runs' composites (population standard
            deviation, as `summarize`), floored at 0: 1 when every run scores the same, lower
            the more they scatter. None under two composites or when their mean is 0.
    """

    variant: str
    runs: int
    pass_rate: Statistics | None
    impl_rate: Statistics | None
    composite: Statistics | None
    cost_usd: Statistics | None
    duration_seconds: Statistics | None
    grade: str | None
    cost_of_pass: float | None
    consistency: float | None = None


@dataclass(frozen=True)
class VariantReport:
    """Every variant's statistics and the comparisons between them.

    Attributes:
        variants: per-variant statistics, in natural order (T0, T1, ..., T10).
        baseline: the baseline variant's name, None when it has no runs here.
        uplift: variant -> (median composite - baseline's) / baseline's, for every
            non-baseline variant; None when there is no baseline or its median composite is 0.
        pass_rate_variance / composite_variance / cost_variance: population variance over the
            variants' medians (None without any variant reporting the metric).
        cost_delta: max - min of the variants' median costs.
        frontier_cost_of_pass: the lowest finite cost of pass of any variant: the cheapest
            way this experiment found to buy a passing run (ProjectScylla's "frontier CoP").
            None when no variant both has a cost and passed.
        best_value: the variant at that frontier, i.e. the best value for money; on a tie in
            cost of pass, the higher median composite, then the earlier variant.
    """

    variants: tuple[VariantStats, ...]
    baseline: str | None
    uplift: dict[str, float | None]
    pass_rate_variance: float | None
    composite_variance: float | None
    cost_variance: float | None
    cost_delta: float | None
    frontier_cost_of_pass: float | None = None
    best_value: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The report as plain data (an infinite cost of pass stays ``math.inf``: the served
        model's `CostOfPass` field writes it as "inf")."""
        return asdict(self)


def uplift(score: float, t0: float) -> float | None:
    """Relative improvement ``(score - t0) / t0`` over the baseline; None when ``t0`` is 0."""
    return None if t0 == 0 else (score - t0) / t0


def _medians(
    variants: Sequence[VariantStats], pick: Callable[[VariantStats], Statistics | None]
) -> list[float]:
    return [s.median for s in map(pick, variants) if s is not None]


def pass_rate_variance(variants: Sequence[VariantStats]) -> float | None:
    """Population variance of the variants' median pass rates (None without variants)."""
    return population_variance(_medians(variants, lambda v: v.pass_rate))


def cost_variance(variants: Sequence[VariantStats]) -> float | None:
    """Population variance of the variants' median costs (None when no variant has a cost)."""
    return population_variance(_medians(variants, lambda v: v.cost_usd))


def cost_delta(variants: Sequence[VariantStats]) -> float | None:
    """Most minus least expensive variant by median cost (None when no variant has a cost)."""
    costs = _medians(variants, lambda v: v.cost_usd)
    return max(costs) - min(costs) if costs else None


def consistency(values: Sequence[float]) -> float | None:
    """``1 - std / mean`` of ``values`` floored at 0; None under two values or a mean of 0."""
    if len(values) < 2:
        return None
    stats = summarize(values)
    return None if stats.mean == 0 else max(0.0, 1.0 - stats.std_dev / stats.mean)


def frontier(variants: Sequence[VariantStats]) -> VariantStats | None:
    """The variant with the lowest finite cost of pass (see `VariantReport.best_value`)."""
    priced = [v for v in variants if v.cost_of_pass is not None and math.isfinite(v.cost_of_pass)]
    if not priced:
        return None
    # min() keeps the first of equal keys, so on a full tie the earlier variant wins.
    return min(
        priced,
        key=lambda v: (v.cost_of_pass, -(v.composite.median if v.composite else -1.0)),
    )


def _summary(values: Sequence[float | None]) -> Statistics | None:
    present = [v for v in values if v is not None]
    return summarize(present) if present else None


def variant_stats(
    variant: str, runs: Sequence[ScyllaScores], profile: ScyllaProfile
) -> VariantStats:
    """Statistics of one variant's runs; raises ValueError when ``runs`` is empty."""
    if not runs:
        raise ValueError(f"variant {variant!r} has no runs")
    composites = [r.composite for r in runs if r.composite is not None]
    composite = _summary(composites)
    costed = [r for r in runs if r.cost_usd is not None and r.pass_rate is not None]
    cost_of_pass = None
    if costed:
        passes = sum(r.pass_rate or 0.0 for r in costed)
        total = math.fsum(r.cost_usd or 0.0 for r in costed)
        cost_of_pass = math.inf if passes == 0 else total / passes
    return VariantStats(
        variant=variant,
        runs=len(runs),
        pass_rate=_summary([r.pass_rate for r in runs]),
        impl_rate=_summary([r.impl_rate for r in runs]),
        composite=composite,
        cost_usd=_summary([r.cost_usd for r in runs]),
        duration_seconds=_summary([r.duration_seconds for r in runs]),
        grade=None if composite is None else letter_grade(composite.median, profile),
        cost_of_pass=cost_of_pass,
        consistency=consistency(composites),
    )


def natural_order(name: str) -> tuple[Any, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


def compare_variants(
    runs_by_variant: Mapping[str, Sequence[ScyllaScores]], profile: ScyllaProfile
) -> VariantReport:
    """Statistics of every variant and the cross-variant comparisons of spec 003.

    Args:
        runs_by_variant: variant name -> its runs (each variant at least one run).
        profile: the ``scylla`` section; ``baseline_variant`` names the uplift baseline.
    """
    names = sorted(runs_by_variant, key=natural_order)
    variants = tuple(variant_stats(n, runs_by_variant[n], profile) for n in names)
    by_name = {v.variant: v for v in variants}
    base = by_name.get(profile.baseline_variant)
    base_score = None if base is None or base.composite is None else base.composite.median
    uplifts: dict[str, float | None] = {}
    for v in variants:
        if v is base:
            continue
        score = None if v.composite is None else v.composite.median
        uplifts[v.variant] = (
            None if score is None or base_score is None else uplift(score, base_score)
        )
    cheapest = frontier(variants)
    return VariantReport(
        variants=variants,
        baseline=None if base is None else base.variant,
        uplift=uplifts,
        pass_rate_variance=pass_rate_variance(variants),
        composite_variance=population_variance(_medians(variants, lambda v: v.composite)),
        cost_variance=cost_variance(variants),
        cost_delta=cost_delta(variants),
        frontier_cost_of_pass=None if cheapest is None else cheapest.cost_of_pass,
        best_value=None if cheapest is None else cheapest.variant,
    )
