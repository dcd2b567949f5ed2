"""One submission's evaluation from its stored tier results: every scorer that applies.

Pure: the merge task loads the rows and the baseline, calls `evaluate_submission`, and stores
what it returns.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from evalq.core.applicable import applicable_inputs
from evalq.core.normalise import normalise_time
from evalq.core.pricing import quote_submission
from evalq.core.profile import Profile
from evalq.core.results import (
    WORKER_LOST,
    ArenaScores,
    ErrorRecord,
    EvaluationScores,
    EvaluationStatus,
    MissingTier,
    PeerReadScores,
    PriceSource,
    ReviewScores,
    RunCost,
    ScyllaScores,
    SuiteScores,
    TierOutcome,
    TierResults,
)
from evalq.core.schemas import (
    PEERREAD_INPUTS,
    RUBRIC_NAMES,
    TIERS,
    RubricName,
    Submission,
    Task,
    Tier,
)
from evalq.scoring.arena import Baseline, score_arena_run
from evalq.scoring.arena.outliers import run_flags
from evalq.scoring.arena.run import ArenaRun
from evalq.scoring.arena.validation import validate_evaluation
from evalq.scoring.injection import INSTRUCTIONS_JUDGED_AS_WRITTEN, judged_as_written, merged_marks
from evalq.scoring.kinds import kind_of
from evalq.scoring.peerread import peerread_composite
from evalq.scoring.scylla import score_scylla_run
from evalq.scoring.suite import evaluate_suite


@dataclass(frozen=True)
class EvaluationResult:
    """What the merge stores: status, every applicable score, and the tiers that are missing."""

    status: EvaluationStatus
    scores: EvaluationScores
    missing: dict[str, MissingTier]
    error: ErrorRecord | None = None  # why a ``failed`` evaluation failed
    judged_as_written: int = 0
    """Sentences tier 1 marked that the judge scored without leaving out (the run is then
    held: `evalq.scoring.injection.judged_as_written`); stored on the submission's row."""


def judge_scores(judge: TierOutcome | None) -> dict[str, float | None]:
    """The judge's normalised rubric scores, None for each when the judge did not run."""
    result = judge.judge if judge is not None else None
    scores = result.scores if result is not None else {}
    return {rubric: scores.get(rubric) for rubric in RUBRIC_NAMES}


NOT_JUDGED = "no judge ran: similarity cannot tell a review from a summary of the paper"
"""The PeerRead note when the judge did not run: on real ICLR 2017 reviews tier 1 ranks the
paper's own abstract above a real expert review of it about half the time (docs/scoring.md)."""


def judge_ran(judge: TierOutcome | None) -> bool:
    """Did the judge answer (status ok with a result)?"""
    return judge is not None and judge.status == "ok" and judge.judge is not None


def missing_tiers(tiers: Mapping[Tier, TierOutcome]) -> dict[str, MissingTier]:
    """Each tier that did not produce metrics, with why (absent, skipped: reason, failed: error)."""
    missing: dict[str, MissingTier] = {}
    for name in TIERS:
        tier = tiers.get(name)
        if tier is None:
            missing[name] = MissingTier(status="absent")
        elif tier.status == "skipped":
            missing[name] = MissingTier(status="skipped", reason=tier.reason)
        elif tier.status == "failed":
            error = tier.error.public() if tier.error is not None else None
            missing[name] = MissingTier(status="failed", error=error)
    return missing


@dataclass(frozen=True)
class InputSet:
    """The PeerRead inputs of one submission over the task's one input set.

    Attributes:
        values: input -> value; 0.0 for an input the submitter did not report.
        not_reported: inputs the submitter did not report (no time, no trace, a trace without
            what the metric measures, a judge rubric without its input): the worst value.
        partial: inputs missing because their tier failed or never ran: left out, and the
            composite is marked partial.
        excluded: inputs no submission of this task can have here (the task does not ask for
            them, `applicable_inputs`; it has no reference outputs, no reference graph or
            optimal tools; no judge is configured): left out for every submission alike.
    """

    values: dict[str, float | None]
    not_reported: tuple[str, ...]
    partial: tuple[str, ...]
    excluded: tuple[str, ...]


JUDGE_INPUTS: tuple[RubricName, ...] = (
    "technical_accuracy",
    "constructiveness",
    "planning_rationality",
)
"""The judge's rubrics that are PeerRead inputs: all three (spec 001 names only planning
rationality; the review rubrics are evalq's addition, docs/scoring.md)."""


def peerread_inputs(
    submission: Submission, task: Task, tiers: Mapping[Tier, TierOutcome]
) -> InputSet:
    """Sort each PeerRead input into present, not reported, partial or excluded (docs/scoring.md:
    every submission of a task is scored over the same inputs; omission never raises a score)."""
    state: dict[str, str] = {}
    values: dict[str, float | None] = {}

    def put(name: str, value: float | None, *, when_none: str) -> None:
        state[name] = "present" if value is not None else when_none
        values[name] = value

    time = submission.usage.execution_time
    put("time_taken", normalise_time(time) if time else None, when_none="not_reported")

    text = tiers.get("text")
    for name in ("task_success", "output_similarity"):
        if not task.reference_outputs:
            put(name, None, when_none="excluded")
        elif text is None or text.status == "failed":
            put(name, None, when_none="partial")
        else:
            result = text.text
            value = None
            if result is not None and name == "task_success":
                value = result.task_success
            elif result is not None:  # what it did not copy, read between floor and ceiling
                value = result.original_similarity
                if value is None:  # a result stored before: its calibrated, else raw, value
                    value = result.calibrated_similarity
                if value is None:
                    value = result.overall_similarity
            put(name, value, when_none="not_reported")

    graph = tiers.get("graph")
    for name in ("coordination_quality", "tool_efficiency"):
        task_has_references = task.reference_tool_graph is not None or bool(task.optimal_tools)
        if name == "tool_efficiency" and not task_has_references:
            put(name, None, when_none="excluded")
        elif graph is None or graph.status == "failed":
            put(name, None, when_none="partial")
        else:  # skipped (no trace) or ok; a metric the trace cannot show is not reported
            found = graph.graph
            value = None
            if found is not None:
                value = (
                    found.coordination_quality
                    if name == "coordination_quality"
                    else found.tool_efficiency
                )
            put(name, value, when_none="not_reported")

    judge = tiers.get("judge")
    for rubric in JUDGE_INPUTS:
        if judge is not None and judge.status == "skipped":
            put(rubric, None, when_none="excluded")  # no judge in this deployment: none has it
        elif judge is None or judge.status == "failed" or judge.judge is None:
            put(rubric, None, when_none="partial")
        else:
            score = judge.judge.scores.get(rubric)
            unanswered = "partial"
            try:
                reason = judge.judge.rubric(rubric).skip_reason or ""
                if reason.startswith("not applicable"):
                    unanswered = "not_reported"  # the submission lacks what the rubric reads
            except KeyError:
                unanswered = "excluded"  # the profile's judge does not ask this rubric
            put(rubric, score, when_none=unanswered)

    def named(kind: str) -> tuple[str, ...]:
        return tuple(name for name in PEERREAD_INPUTS if state.get(name) == kind)

    for name in set(PEERREAD_INPUTS) - set(applicable_inputs(task)):
        put(name, None, when_none="excluded")  # the task does not ask for it: never a zero
    for name in named("not_reported"):
        values[name] = 0.0
    return InputSet(values, named("not_reported"), named("partial"), named("excluded"))


def scylla_pass(submission: Submission, criteria: tuple[bool, ...]) -> bool | None:
    """Did a Scylla run pass: its ``passed`` flag, else all of its task's criteria; None when it
    has neither (never a vacuous pass)."""
    if submission.passed is not None:
        return submission.passed
    if not criteria:
        return None
    return all(criteria)


def review_of(
    run: ArenaRun, arena: ArenaScores, baseline: Baseline, profile: Profile
) -> ReviewScores:
    """Spec 000's outlier indicators and validation rules for one run.

    The token threshold is the task's current median tokens (the baseline's) times
    ``outlier_token_fraction``; with at least ``outlier_min_flags`` indicators the run is flagged
    for a manual review (it is then kept out of the task's baseline until a person accepts it).
    """
    flags = run_flags(
        run, baseline.median_tokens * profile.arena.outlier_token_fraction, profile.arena
    )
    review_flags = flags if len(flags) >= profile.arena.outlier_min_flags else ()
    return ReviewScores(flags=review_flags, warnings=tuple(validate_evaluation(arena, run)))


def run_cost(
    submission: Submission,
    profile: Profile,
    cost_usd: float | None,
    priced_by: PriceSource | None = None,
) -> RunCost | None:
    """The cost priced at submit with the price's source stored beside it (``priced_by``).

    A row stored before evalq kept the source (migration 0007) has none: the same pricing is
    run again and trusted only when it gives the stored figure (prices that changed since, or
    a row priced by an older evalq, leave the source unknown).
    """
    if cost_usd is None:
        return None
    if priced_by is not None:
        return RunCost(usd=cost_usd, priced_by=priced_by)
    quote = quote_submission(submission, profile)
    same = quote is not None and quote.cost_usd == cost_usd
    return RunCost(usd=cost_usd, priced_by=quote.source if same and quote else None)


def evaluate_submission(
    submission: Submission,
    task: Task,
    tiers: Mapping[Tier, TierOutcome],
    baseline: Baseline,
    profile: Profile,
    *,
    cost_usd: float | None,
    priced_by: PriceSource | None = None,
) -> EvaluationResult:
    """Score a submission with the scorers its task's kind names (`evalq.scoring.kinds`).

    The Arena scores always apply (every submission reports usage); PeerRead for ``peerread``
    tasks, Scylla for ``scylla``, the suite gate for ``suite``. A failed or absent tier makes the
    evaluation ``degraded`` and its composite ``partial``; it is never scored as 0. An input the
    submitter did not report counts as the worst value (`peerread_inputs`). A skipped tier (no
    judge configured, no trace, no references) is not a failure. A tier whose input killed its
    worker on every delivery (`WORKER_LOST`) makes the evaluation ``failed``, with the reason in
    ``error``: the partial scores are kept for inspection, but a failed submission is left out of
    rankings and baselines. ``cost_usd`` is the cost priced at submit and ``priced_by`` where
    its price came from (both stored on its row; `run_cost` prices an older row again).
    """
    rule = kind_of(
        task,
        has_variants=submission.variant is not None,
        has_scenarios=bool(submission.scenarios),
    )
    judged = judge_scores(tiers.get("judge"))
    usage = submission.usage
    run = ArenaRun.of(submission, cost_usd)
    arena = score_arena_run(run, task, submission.evidence, baseline, profile.arena)
    missing = missing_tiers(tiers)
    partial = any(m.status in ("failed", "absent") for m in missing.values())
    peer_scores: PeerReadScores | None = None
    if rule.peerread:
        inputs = peerread_inputs(submission, task, tiers)
        present = {
            k: v for k, v in inputs.values.items() if k not in inputs.excluded + inputs.partial
        }
        peer = peerread_composite(present, profile.peerread, not_reported=inputs.not_reported)
        text = tiers.get("text")
        found = text.text if text is not None and text.status == "ok" else None
        peer_scores = peer.model_copy(
            update={
                "missing": inputs.partial + inputs.excluded,
                "partial": bool(inputs.partial),
                "raw_similarity": found.overall_similarity if found else None,
                "reference_agreement": found.reference_agreement if found else None,
                "note": None if judge_ran(tiers.get("judge")) else NOT_JUDGED,
                "copied": found.copy_note if found else None,
            }
        )
    scylla_scores: ScyllaScores | None = None
    if rule.scylla:
        present_judge = [s for s in judged.values() if s is not None]
        impl = submission.impl_rate
        if impl is None and present_judge:
            impl = sum(present_judge) / len(present_judge)
        scylla_scores = score_scylla_run(
            passed=scylla_pass(submission, tuple(c.passed for c in arena.criteria)),
            impl_rate=impl,
            cost_usd=run.cost_usd,
            duration_seconds=usage.execution_time,
            profile=profile.scylla,
            variant=submission.variant or "T0",
            run_index=submission.run_index,
        )
    suite_scores: SuiteScores | None = None
    if rule.suite:
        suite_scores = evaluate_suite(submission.scenarios, task.required_scenarios, profile.suite)
    ok = {name: t.result for name, t in tiers.items() if t.status == "ok"}
    text_marks = tiers["text"].marks() if "text" in tiers else ()
    judge_marks = tiers["judge"].marks() if "judge" in tiers else ()
    review = review_of(run, arena, baseline, profile)
    unjudged = judged_as_written(
        text_marks, judge_marks, judged=any(s is not None for s in judged.values())
    )
    if unjudged:
        review = review.model_copy(
            update={"flags": (*review.flags, INSTRUCTIONS_JUDGED_AS_WRITTEN)}
        )
    scores = EvaluationScores(
        kind=rule.kind,
        peerread=peer_scores,
        arena=arena,
        judge=judged,
        tiers=TierResults.model_validate(ok),
        scylla=scylla_scores,
        suite=suite_scores,
        review=review,
        cost=run_cost(submission, profile, cost_usd, priced_by),
        injection=merged_marks(text_marks, judge_marks),
    )
    for name, gap in missing.items():
        if gap.error is not None and gap.error.type == WORKER_LOST:
            error = ErrorRecord(
                type=WORKER_LOST,
                message=gap.error.message,
                attempts=gap.error.attempts,
                kind="worker_lost",
                tier=name,
            )
            return EvaluationResult("failed", scores, missing, error, len(unjudged))
    status: EvaluationStatus = "degraded" if partial else "done"
    return EvaluationResult(status, scores, missing, judged_as_written=len(unjudged))
