"""One submission's evaluation from its stored tier results: every scorer that applies.

Pure: the merge task loads the rows and the baseline, calls `evaluate_submission`, and stores
what it returns.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from evalq.core.normalise import normalise_time
from evalq.core.profile import Profile
from evalq.core.results import (
    WORKER_LOST,
    ArenaScores,
    ErrorRecord,
    EvaluationScores,
    EvaluationStatus,
    MissingTier,
    PeerReadScores,
    ScyllaScores,
    SuiteScores,
    TierOutcome,
    TierResults,
)
from evalq.core.schemas import TIERS, Submission, Task, Tier
from evalq.scoring import scylla
from evalq.scoring.arena import Baseline, score_run
from evalq.scoring.arena.run import ArenaRun
from evalq.scoring.peerread import peerread_composite
from evalq.scoring.suite import evaluate_suite

JUDGE_RUBRICS = ("technical_accuracy", "constructiveness", "planning_rationality")


@dataclass(frozen=True)
class EvaluationResult:
    """What the merge stores: status, every applicable score, and the tiers that are missing."""

    status: EvaluationStatus
    scores: EvaluationScores
    missing: dict[str, MissingTier]
    error: ErrorRecord | None = None  # why a ``failed`` evaluation failed


def judge_scores(judge: TierOutcome | None) -> dict[str, float | None]:
    """The judge's normalised rubric scores, None for each when the judge did not run."""
    result = judge.judge if judge is not None else None
    scores = result.scores if result is not None else {}
    return {rubric: scores.get(rubric) for rubric in JUDGE_RUBRICS}


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


def evaluate_submission(
    submission: Submission,
    task: Task,
    tiers: Mapping[Tier, TierOutcome],
    baseline: Baseline,
    profile: Profile,
    *,
    cost_usd: float | None,
) -> EvaluationResult:
    """Score a submission with every scorer that applies to it.

    PeerRead and Arena always apply; Scylla when the submission names a variant; the suite gate
    when it carries scenarios or the task requires some. A failed or absent tier makes the
    evaluation ``degraded`` and is never scored as 0: the composites are renormalised over what is
    present and ``missing`` names the rest. A skipped tier (no judge configured, no trace, no
    references) is not a failure. A tier whose input killed its worker on every delivery
    (`WORKER_LOST`) makes the evaluation ``failed``, with the reason in ``error``: the partial
    scores are kept for inspection, but a failed submission is left out of rankings and baselines.
    ``cost_usd`` is the cost priced at submit (stored on the submission's row).
    """
    text = tiers["text"].text if "text" in tiers else None
    graph = tiers["graph"].graph if "graph" in tiers else None
    judged = judge_scores(tiers.get("judge"))
    usage = submission.usage
    peer = peerread_composite(
        {
            "time_taken": None
            if usage.execution_time is None
            else normalise_time(usage.execution_time),
            "task_success": text.task_success if text else None,
            "output_similarity": text.overall_similarity if text else None,
            "coordination_quality": graph.coordination_quality if graph else None,
            "tool_efficiency": graph.tool_efficiency if graph else None,
            "planning_rational": judged["planning_rationality"],
        },
        profile.peerread,
    )
    run = ArenaRun.of(submission, cost_usd)
    arena = score_run(run, task, submission.evidence, baseline, profile.arena)
    scylla_scores: ScyllaScores | None = None
    if submission.variant is not None:
        passed = submission.passed
        if passed is None:
            passed = all(c.passed for c in arena.criteria)
        present = [s for s in judged.values() if s is not None]
        impl = submission.impl_rate
        if impl is None and present:
            impl = sum(present) / len(present)
        scylla_scores = scylla.score_run(
            passed=passed,
            impl_rate=impl,
            cost_usd=run.cost_usd,
            duration_seconds=usage.execution_time,
            profile=profile.scylla,
        ).scores(variant=submission.variant, run_index=submission.run_index)
    suite_scores: SuiteScores | None = None
    if submission.scenarios or task.required_scenarios:
        suite_scores = SuiteScores.model_validate(
            evaluate_suite(submission.scenarios, task.required_scenarios, profile.suite).to_dict()
        )
    ok = {name: t.result for name, t in tiers.items() if t.status == "ok"}
    scores = EvaluationScores(
        peerread=PeerReadScores.model_validate(peer.to_dict()),
        arena=ArenaScores.model_validate(arena.to_dict()),
        judge=judged,
        tiers=TierResults.model_validate(ok),
        scylla=scylla_scores,
        suite=suite_scores,
    )
    missing = missing_tiers(tiers)
    for name, gap in missing.items():
        if gap.error is not None and gap.error.type == WORKER_LOST:
            error = ErrorRecord(
                type=WORKER_LOST,
                message=gap.error.message,
                attempts=gap.error.attempts,
                kind="worker_lost",
                tier=name,
            )
            return EvaluationResult("failed", scores, missing, error)
    degraded = any(m.status in ("failed", "absent") for m in missing.values())
    return EvaluationResult("degraded" if degraded else "done", scores, missing)
