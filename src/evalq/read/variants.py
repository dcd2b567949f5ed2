"""A task's Scylla runs grouped by variant: the one grouping rule reports and the API share."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from pydantic import Field

from evalq.core.results import CostOfPass, ScyllaScores
from evalq.read.reply import Reply
from evalq.read.view import ScoredRow
from evalq.scoring.worth import Metric, VariantAnalysis, Verdict
from evalq.stats.bootstrap import UpliftInterval
from evalq.stats.comparison import Correction, PairedDifference
from evalq.stats.statistics import Statistics


def variant_runs(
    rows: Sequence[ScoredRow], *, include_held: bool = False
) -> dict[str, list[ScyllaScores]]:
    """Every evaluated run of a task (its `TaskView` rows) that names a variant, by variant.

    A run belongs to the variant its submission named (stored with its Scylla scores by the
    merge); submissions without a variant are not part of any group, and runs held for review
    (flagged, not yet accepted) are not either unless ``include_held``.
    """
    runs: dict[str, list[ScyllaScores]] = defaultdict(list)
    for row in rows:
        if row.held and not include_held:
            continue
        scylla = row.scores.scylla
        if scylla is not None:
            runs[scylla.variant].append(scylla)
    return dict(runs)


class VariantStatistics(Reply):
    """One variant's runs; a metric no run reported is null."""

    variant: str
    runs: int
    pass_rate: Statistics | None
    impl_rate: Statistics | None
    composite: Statistics | None
    cost_usd: Statistics | None
    duration_seconds: Statistics | None
    grade: str | None = Field(description="Letter grade of the median composite.")
    cost_of_pass: CostOfPass | None = Field(
        description='Dollars per pass; "inf" when no run passed, null when no run has a cost.'
    )
    consistency: float | None = Field(
        description="1 - std/mean of its runs' composites, floored at 0; null under 2 runs."
    )


class VariantStep(Reply):
    """The step from one variant to another: per-metric uplift with intervals, and a verdict."""

    source: str
    target: str
    uplift: dict[Metric, UpliftInterval] = Field(
        description="Metric -> relative uplift of target over source with its percentile "
        "bootstrap interval (pass rate: means; the others: medians, spec 003's uplift; cost: "
        "lower is cheaper). Descriptive: these decide nothing."
    )
    cost_of_pass_delta: float | None = Field(
        description="Target's cost of pass minus source's; null when either is unknown or inf."
    )
    verdict: Verdict = Field(
        description="The two-sample permutation test of the mean composites, corrected over "
        "every pair: worth it when it rejects and target's mean is higher, not worth it when "
        "lower, inconclusive otherwise (or too few runs)."
    )
    reason: str
    withheld: bool = Field(
        default=False,
        description="A variant of the step sent fewer runs than its peers and no run plan "
        "covers the difference: the verdict is withheld (inconclusive; the reason says why).",
    )
    difference: PairedDifference | None = Field(
        default=None,
        description="Target's mean composite minus source's with the interval of the test "
        "that decides (inverted, at step_level): it excludes 0 exactly when the verdict is "
        "not inconclusive. Null with too few runs.",
    )
    p_value: float | None = Field(default=None, description="The test's p-value.")
    adjusted_p: float | None = Field(default=None, description="After the family's correction.")


class BootstrapMethod(Reply):
    """How the intervals were drawn."""

    level: float
    resamples: int
    seed: int
    steps: int = Field(description="The tests judged as one family (every pair of variants).")
    step_level: float = Field(
        description="The level of the intervals beside the verdicts: 1 - the raw p-value "
        "threshold the correction judged the family at."
    )
    correction: Correction = "holm"
    alpha: float = 0.05


class VariantsAnalysis(Reply):
    """`VariantsReport` without the task id and run count (inside a comparison)."""

    variants: list[VariantStatistics]
    baseline: str | None
    uplift: dict[str, float | None]
    pass_rate_variance: float | None
    composite_variance: float | None
    cost_variance: float | None
    cost_delta: float | None
    frontier_cost_of_pass: float | None
    best_value: str | None
    best_value_share: float | None
    over_baseline: list[VariantStep]
    transitions: list[VariantStep]
    pairs: list[VariantStep] = Field(
        default_factory=list,
        description="Every pair of variants, the earlier the source: any two variants' verdict.",
    )
    bootstrap: BootstrapMethod
    run_plans: list[str] = Field(
        default_factory=list,
        description="Variants that sent fewer runs than planned (the rest counted as failures "
        "at the task's worst cost) or than their peers (their verdicts withheld), in words "
        '("T1: 5 of 10 planned runs"); empty when none.',
    )


def variants_analysis(analysis: VariantAnalysis) -> VariantsAnalysis:
    """The variant analysis as served, from the dataclasses `evalq.scoring.worth` computes
    (their ``to_dict`` flattens the variant report into the analysis, the served layout)."""
    return VariantsAnalysis.model_validate(analysis.to_dict())
