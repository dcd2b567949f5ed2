"""Bodies of the task reports: leaderboard, baseline, variants and suite gate.

Each mirrors, key for key, the dict `evalq.read` builds (`Leaderboard.to_dict`,
`baseline_report`, `variant_report`, `suite_report`); see `Reply`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from evalq.core.profile import Recommendation
from evalq.core.results import EvaluationStatus, SuiteScores
from evalq.core.schemas import TaskKind
from evalq.producer.api.models import Reply
from evalq.scoring.arena import Baseline
from evalq.scoring.bootstrap import UpliftInterval
from evalq.scoring.comparison import Correction
from evalq.scoring.contrast import GroupComparison, UnitValues
from evalq.scoring.statistics import Statistics
from evalq.scoring.worth import Metric, Verdict
from evalq.store.models import Review

# --- leaderboard -----------------------------------------------------------------------------


class CategoryRanks(Reply):
    """An entry's rank in each Arena category (standard competition ranking)."""

    efficiency: int
    speed: int
    cost: int
    correctness: int


class RankInterval(Reply):
    """The bootstrap interval of a rank, in whole ranks (1 is best)."""

    low: int = Field(description="The (1 - level) / 2 quantile of the ranks, rounded down.")
    high: int = Field(description="The (1 + level) / 2 quantile of the ranks, rounded up.")


RANK_INTERVAL = (
    "Bootstrap interval of the rank (see rank_uncertainty); null when the row has nothing to "
    "resample, with rank_interval_note saying why."
)
NOT_SEPARABLE = (
    "Rows whose rank interval overlaps this one's: the data do not say which ranks higher. "
    "Empty without an interval."
)


class LeaderboardEntry(Reply):
    """One evaluated submission; Arena figures are re-scored against the current baseline."""

    rank: int | None = Field(
        description="Standard competition rank (1, 1, 3) by the task kind's key; null for a run "
        "held for review (listed after the ranked rows) unless include_held."
    )
    submission_id: str
    tool: str
    model: str
    variant: str | None
    status: EvaluationStatus
    ranking_value: float | None = Field(description="The value shown for the ranking key.")
    partial: bool = Field(description="A tier failed (status degraded): ranked below the rest.")
    not_reported: list[str] = Field(description="Inputs the submitter did not report.")
    review: Review | None = Field(
        description="flagged: held for review (out of the baseline, and unless include_held "
        "out of ranks, percentiles, intervals and comparisons) until a person accepts it; "
        "accepted: a person accepted it; null: never flagged."
    )
    held: bool = Field(
        description="Held for review (review flagged): unranked and out of every statistic of "
        "the board unless include_held."
    )
    flags: list[str] = Field(description="Outlier indicators that asked for a manual review.")
    warnings: list[str] = Field(description="Validation warnings (shown, never held against).")
    overall: float = Field(description="Arena overall before the difficulty factor (0-100).")
    overall_adjusted: float = Field(description="Arena overall after the difficulty factor.")
    efficiency: float
    speed: float
    cost: float
    correctness: float
    category_ranks: CategoryRanks | None = Field(description="Null for an unranked held run.")
    percentile: float | None = Field(
        description="Mid-rank percentile among the ranked entries; null for a held run."
    )
    peerread: float | None = Field(description="The PeerRead composite.")
    recommendation: Recommendation | None
    peerread_note: str | None = Field(
        default=None,
        description="What the PeerRead composite cannot see (no judge ran: similarity cannot "
        "tell a review from a summary of the paper).",
    )
    scylla_composite: float | None
    scylla_grade: str | None
    suite_passed: bool | None
    suite_final_score: float | None
    rank_interval: RankInterval | None = Field(description=RANK_INTERVAL)
    rank_interval_note: str | None = Field(description="Why there is no rank interval.")
    not_separable_from: list[str] = Field(description="Submission ids. " + NOT_SEPARABLE)


class VariantRank(Reply):
    """One variant of a Scylla task's per-variant board, ranked by median composite."""

    rank: int
    variant: str
    runs: int
    pass_rate: float | None = Field(description="Mean pass rate of its runs.")
    median_composite: float | None
    grade: str | None
    cost_of_pass: float | Literal["inf"] | None = Field(
        description='Dollars per pass; "inf" when no run passed, null when no run has a cost.'
    )
    uplift: float | None = Field(description="Over the baseline variant; null for it.")
    rank_interval: RankInterval | None = Field(description=RANK_INTERVAL)
    rank_interval_note: str | None = Field(description="Why there is no rank interval.")
    not_separable_from: list[str] = Field(description="Variant names. " + NOT_SEPARABLE)


class ConfidenceInterval(Reply):
    """Student-t confidence interval of the mean ranking value."""

    of: str = Field(description="The ranking key whose values it is about.")
    low: float
    high: float
    mean: float | None = Field(description="Null with too few values.")
    enough_data: bool = Field(description="False under 3 values (the bounds are then the range).")
    level: float = Field(description="Confidence level, e.g. 0.95.")


class RankUncertainty(Reply):
    """How a board's rank intervals were drawn (a percentile bootstrap of competition ranks)."""

    applies_to: Literal["entries", "variants"] | None = Field(
        description="The rows with intervals: variants (scylla), entries (suite); null: none."
    )
    units: Literal["runs", "scenarios"] | None = Field(
        description="What was resampled: each variant's runs, or each entry's scenarios."
    )
    resamples: int = Field(description="Resamples drawn; 0 when nothing was resampled.")
    seed: int = Field(description="Seed of the resamples: the same results, the same intervals.")
    level: float = Field(description="Level of the intervals, e.g. 0.95.")
    note: str = Field(description="The method in a sentence.")


class LeaderboardReport(Reply):
    """Body of GET /v1/tasks/{id}/leaderboard."""

    task_id: str
    kind: TaskKind = Field(description="The task kind, which decides the ranking.")
    ranking_key: str = Field(description="What the entries are ranked by.")
    baseline_version: int = Field(description="The Arena baseline every entry was scored against.")
    baseline_is_default: bool
    entries: list[LeaderboardEntry] = Field(description="By rank, then submission id.")
    variants: list[VariantRank] | None = Field(
        description="A Scylla task's per-variant board; null for the other kinds."
    )
    confidence_interval: ConfidenceInterval
    rank_uncertainty: RankUncertainty
    include_held: bool = Field(
        description="True: runs held for review were ranked among the others; false: they are "
        "listed after the ranked rows, unranked, and out of every statistic."
    )


# --- baseline --------------------------------------------------------------------------------


class BaselineReport(Reply):
    """Body of GET /v1/tasks/{id}/baseline."""

    task_id: str
    version: int = Field(description="0: the profile's defaults, before any refresh stored one.")
    is_default: bool
    submission_count: int = Field(description="Evaluated submissions it was computed from.")
    created_at: str | None = Field(description="When it was stored (ISO 8601); null for 0.")
    baseline: Baseline = Field(
        description="Medians and ranges of the task's runs (`evalq.scoring.arena.Baseline`); "
        "is_default: fewer runs than min_submissions, every figure the profile's default."
    )


# --- variants --------------------------------------------------------------------------------


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
    cost_of_pass: float | Literal["inf"] | None = Field(
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
        "bootstrap interval (pass rate: means; the others: medians; cost: lower is cheaper)."
    )
    cost_of_pass_delta: float | None = Field(
        description="Target's cost of pass minus source's; null when either is unknown or inf."
    )
    verdict: Verdict = Field(
        description="worth it: the composite's interval is above zero; not worth it: below; "
        "inconclusive: it holds zero."
    )
    reason: str


class BootstrapMethod(Reply):
    """How the intervals were drawn."""

    level: float
    resamples: int
    seed: int
    steps: int = Field(
        description="The distinct steps whose verdicts form one family (Bonferroni)."
    )
    step_level: float = Field(
        description="The level each step's intervals are drawn at: 1 - (1 - level) / steps."
    )


class VariantsReport(Reply):
    """Body of GET /v1/tasks/{id}/variants (spec 003's cross-variant report)."""

    task_id: str
    runs: int = Field(description="Evaluated submissions that name a variant.")
    variants: list[VariantStatistics] = Field(description="In natural order: T0, T1, ..., T10.")
    baseline: str | None = Field(description="The baseline variant; null when it has no runs.")
    uplift: dict[str, float | None] = Field(
        description="Other variant -> relative uplift of its median composite over the "
        "baseline's; null without a baseline or when the baseline's is 0."
    )
    pass_rate_variance: float | None
    composite_variance: float | None
    cost_variance: float | None
    cost_delta: float | None = Field(description="Most minus least expensive median cost.")
    frontier_cost_of_pass: float | None = Field(
        description="The lowest finite cost of pass of any variant (ProjectScylla's frontier)."
    )
    best_value: str | None = Field(description="The variant at that frontier.")
    best_value_share: float | None = Field(
        description="Share of bootstrap resamples of each variant's runs in which the best "
        "value variant still has the lowest cost of pass."
    )
    over_baseline: list[VariantStep] = Field(
        description="The step from the baseline variant to each other variant."
    )
    transitions: list[VariantStep] = Field(
        description="The steps between neighbouring variants: T0 -> T1, T1 -> T2, ..."
    )
    bootstrap: BootstrapMethod


# --- comparisons -----------------------------------------------------------------------------


class LeftOut(Reply):
    """Submissions of a compared group that were not compared, and why."""

    group: str
    reason: str
    count: int


class CompareReport(Reply):
    """Body of GET /v1/compare: groups of submissions compared over the units they share."""

    tasks: list[str] = Field(description="The tasks compared.")
    not_evaluated: list[str] = Field(
        description="Tasks named that have no evaluated submission yet (left out)."
    )
    kind: TaskKind
    ranking_key: str = Field(description="What the tasks rank by.")
    score: str = Field(
        description="The score compared: the ranking score, or scenario_score in a suite."
    )
    unit: Literal["task", "scenario"] = Field(description="What pairs (scenarios in a suite).")
    by: str = Field(description="The field that makes the groups.")
    groups: list[str] = Field(description="The groups, the reference first.")
    reference: str
    comparisons: list[GroupComparison] = Field(
        description="Each other group against the reference: design (paired over shared units "
        "or unpaired), the mean difference other - reference with its bootstrap interval, the "
        "deciding test (the sign-flip permutation test of the mean difference; Mann-Whitney U "
        "when unpaired), Wilcoxon signed-rank (secondary) and McNemar where they apply, "
        "Cliff's delta, the corrected p-value; design 'too few' (under 5 shared units) has "
        "no interval, test or verdict."
    )
    units: list[UnitValues] = Field(description="Each unit's mean score per group.")
    correction: Correction = Field(description="The multiple-comparison correction applied.")
    alpha: float
    level: float
    resamples: int
    seed: int
    left_out: list[LeftOut]
    include_held: bool = Field(
        description="True: runs held for review were compared; false: left out, counted in "
        'left_out as "held for review".'
    )
    variants: VariantsAnalysis | None = Field(
        description="The variant analysis of a single Scylla task compared by variant."
    )


# --- suite -----------------------------------------------------------------------------------


class SuiteResult(SuiteScores):
    """One submission's suite gate, as the merge stored it, and who ran it."""

    submission_id: str
    tool: str
    model: str
    status: EvaluationStatus


class SuiteReport(Reply):
    """Body of GET /v1/tasks/{id}/suite (spec 004's gate)."""

    task_id: str
    submissions: int = Field(description="Evaluated submissions that carry a suite gate.")
    passed: int = Field(description="How many of them passed.")
    results: list[SuiteResult]


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
    bootstrap: BootstrapMethod
