"""Task reports the API serves, computed from stored evaluations (never from the queue)."""

from __future__ import annotations

from pydantic import Field
from sqlalchemy.orm import Session

from evalq.core.results import EvaluationStatus, SuiteScores
from evalq.core.settings import Settings
from evalq.read.plans import planned_variant_runs, with_shortfalls
from evalq.read.reply import Reply
from evalq.read.variants import (
    BootstrapMethod,
    VariantStatistics,
    VariantStep,
    variant_runs,
    variants_analysis,
)
from evalq.read.view import task_context, task_view
from evalq.scoring.arena import Baseline
from evalq.scoring.worth import analyse_variants


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
    pairs: list[VariantStep] = Field(
        default_factory=list,
        description="Every pair of variants, the earlier the source: the verdict between any "
        "two (one family: the over_baseline and transitions steps are among them).",
    )
    bootstrap: BootstrapMethod
    run_plans: list[str] = Field(
        default_factory=list,
        description="Variants that sent fewer runs than planned (the rest counted as failures "
        "at the task's worst cost) or than their peers (their verdicts withheld), in words.",
    )


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


def baseline_report(
    session: Session, *, task_id: str, settings: Settings | None = None
) -> BaselineReport:
    """The task's current Arena baseline snapshot; version 0 is the profile's default."""
    current = task_context(session, task_id=task_id, settings=settings).current
    return BaselineReport(
        task_id=task_id,
        version=current.version,
        is_default=current.baseline.is_default,
        submission_count=current.submission_count,
        created_at=None if current.created_at is None else current.created_at.isoformat(),
        baseline=current.baseline,
    )


def variant_report(
    session: Session, *, task_id: str, settings: Settings | None = None, include_held: bool = False
) -> VariantsReport:
    """Per-variant statistics, uplift over the baseline variant, and whether each step is worth
    it (spec 003, `evalq.scoring.worth`).

    Built from the Scylla scores the merge stored for each evaluated submission that names a
    variant (`variant_runs`); submissions without one are not part of it, nor are runs held
    for review unless ``include_held``. Runs planned and not sent count as failures, and a
    variant short of its plan or its peers says so (`evalq.read.plans`).
    """
    view = task_view(session, task_id=task_id, settings=settings)
    sent = variant_runs(view.rows, include_held=include_held)
    profile = view.profile
    runs, short = planned_variant_runs(
        view.rows, profile.scylla, include_held=include_held, tickets=view.tickets
    )
    report = analyse_variants(runs, profile.scylla, level=profile.arena.confidence_level)
    return VariantsReport(
        task_id=task_id,
        runs=sum(map(len, sent.values())),
        **dict(with_shortfalls(variants_analysis(report), short, view.tickets)),
    )


def suite_report(
    session: Session, *, task_id: str, settings: Settings | None = None
) -> SuiteReport:
    """The suite gate of each evaluated submission of the task that carries one (spec 004)."""
    entries = []
    passed = 0
    for scored in task_view(session, task_id=task_id, settings=settings).rows:
        row, evaluation, suite = scored.submission, scored.evaluation, scored.scores.suite
        if suite is not None:
            passed += suite.passed
            entries.append(
                SuiteResult(
                    submission_id=row.id,
                    tool=row.tool,
                    model=row.model,
                    status=evaluation.status,
                    **dict(suite),
                )
            )
    return SuiteReport(task_id=task_id, submissions=len(entries), passed=passed, results=entries)
