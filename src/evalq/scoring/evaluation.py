"""One submission's evaluation from its stored tier results: every scorer that applies.

Pure: the merge task loads the rows and the baseline, calls `evaluate_submission`, and stores
what it returns.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from evalq.errors import POISON_MESSAGE as POISON
from evalq.metrics.time import normalise_time
from evalq.schemas import TIERS, Submission, Task
from evalq.scoring import scylla
from evalq.scoring.arena import Baseline, score_run
from evalq.scoring.arena.run import ArenaRun
from evalq.scoring.peerread import peerread_composite
from evalq.scoring.profile import Profile
from evalq.scoring.suite import evaluate_suite

JUDGE_RUBRICS = ("technical_accuracy", "constructiveness", "planning_rationality")


@dataclass(frozen=True)
class TierView:
    """A stored tier outcome as the merge sees it."""

    status: str  # ok / skipped / failed
    metrics: Mapping[str, Any] = field(default_factory=dict)
    error: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class EvaluationResult:
    """What the merge stores: status, every applicable score, and the tiers that are missing."""

    status: Literal["done", "degraded", "failed"]
    scores: dict[str, Any]
    missing: dict[str, Any]
    error: dict[str, Any] | None = None  # why a ``failed`` evaluation failed


def _metric(tier: TierView | None, name: str) -> float | None:
    if tier is None or tier.status != "ok":
        return None
    value = tier.metrics.get(name)
    return float(value) if isinstance(value, int | float) else None


def judge_scores(judge: TierView | None) -> dict[str, float | None]:
    """The judge's normalised rubric scores, None for each when the judge did not run."""
    scores = (judge.metrics.get("scores") or {}) if judge and judge.status == "ok" else {}
    return {rubric: scores.get(rubric) for rubric in JUDGE_RUBRICS}


def missing_tiers(tiers: Mapping[str, TierView]) -> dict[str, Any]:
    """Each tier that did not produce metrics, with why (absent, skipped: reason, failed: error)."""
    missing: dict[str, Any] = {}
    for name in TIERS:
        tier = tiers.get(name)
        if tier is None:
            missing[name] = {"status": "absent"}
        elif tier.status == "skipped":
            missing[name] = {"status": "skipped", "reason": tier.metrics.get("reason")}
        elif tier.status == "failed":
            error = dict(tier.error or {})
            error.pop("traceback", None)
            missing[name] = {"status": "failed", "error": error}
    return missing


def evaluate_submission(
    submission: Submission,
    task: Task,
    tiers: Mapping[str, TierView],
    baseline: Baseline,
    profile: Profile,
) -> EvaluationResult:
    """Score a submission with every scorer that applies to it.

    PeerRead and Arena always apply; Scylla when the submission names a variant; the suite gate
    when it carries scenarios or the task requires some. A failed or absent tier makes the
    evaluation ``degraded`` and is never scored as 0: the composites are renormalised over what is
    present and ``missing`` names the rest. A skipped tier (no judge configured, no trace, no
    references) is not a failure. A tier whose input killed its worker on every delivery
    (`POISON_MESSAGE`) makes the evaluation ``failed``, with the reason in ``error``: the partial
    scores are kept for inspection, but a failed submission is left out of rankings and baselines.
    """
    text, graph = tiers.get("text"), tiers.get("graph")
    judged = judge_scores(tiers.get("judge"))
    usage = submission.usage
    peer = peerread_composite(
        {
            "time_taken": None
            if usage.execution_time is None
            else normalise_time(usage.execution_time),
            "task_success": _metric(text, "task_success"),
            "output_similarity": _metric(text, "overall_similarity"),
            "coordination_quality": _metric(graph, "coordination_quality"),
            "tool_efficiency": _metric(graph, "tool_efficiency"),
            "planning_rational": judged["planning_rationality"],
        },
        profile.peerread,
    )
    run = ArenaRun.from_submission(submission, profile)
    arena = score_run(run, task, submission.evidence, baseline, profile.arena)
    scores: dict[str, Any] = {
        "peerread": peer.to_dict(),
        "arena": arena.to_dict(),
        "judge": judged,
        "tiers": {name: dict(t.metrics) for name, t in tiers.items() if t.status == "ok"},
    }
    if submission.variant is not None:
        passed = submission.passed
        if passed is None:
            passed = all(c.passed for c in arena.criteria)
        present = [s for s in judged.values() if s is not None]
        impl = submission.impl_rate
        if impl is None and present:
            impl = sum(present) / len(present)
        scores["scylla"] = scylla.score_run(
            passed=passed,
            impl_rate=impl,
            cost_usd=run.cost_usd,
            duration_seconds=usage.execution_time,
            profile=profile.scylla,
        ).to_dict() | {"variant": submission.variant, "run_index": submission.run_index}
    if submission.scenarios or task.required_scenarios:
        scores["suite"] = evaluate_suite(
            submission.scenarios, task.required_scenarios, profile.suite
        ).to_dict()
    missing = missing_tiers(tiers)
    poisoned = [name for name, m in missing.items() if m.get("error", {}).get("type") == POISON]
    if poisoned:
        tier = poisoned[0]
        error = {"type": POISON, "tier": tier, "message": missing[tier]["error"].get("message")}
        return EvaluationResult("failed", scores, missing, error)
    degraded = any(m["status"] in ("failed", "absent") for m in missing.values())
    return EvaluationResult("degraded" if degraded else "done", scores, missing)
