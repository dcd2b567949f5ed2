"""The three tier tasks. Each is a thin adapter around one pure function."""

from __future__ import annotations

from celery import Task as CeleryTask
from celery import shared_task

from evalq.schemas import Submission, Task
from evalq.scoring.profile import Profile
from evalq.settings import Settings, get_settings
from evalq.tasks.context import judge_for, semantic_scorer
from evalq.tasks.tier import TierOutput, run_tier
from evalq.workers.app import TIER_TASKS, celery_config


def compute_text(submission: Submission, task: Task, profile: Profile) -> TierOutput:
    """Tier 1: similarity of the output to the task's references (spec 001)."""
    from evalq.metrics.text import overall_similarity, task_success, text_metrics, tier1_score

    if not task.reference_outputs:
        return TierOutput("skipped", {"reason": "the task has no reference outputs"})
    metrics = text_metrics(
        submission.output,
        task.reference_outputs,
        profile=profile.text,
        semantic=semantic_scorer(profile),
    )
    tier = tier1_score(metrics, submission.usage.execution_time, profile.text)
    return TierOutput(
        "ok",
        {
            "cosine": metrics.cosine,
            "jaccard": metrics.jaccard,
            "semantic": metrics.semantic,
            "references": metrics.references,
            "overall_similarity": overall_similarity(metrics, profile.text),
            "task_success": task_success(metrics, profile.text),
            "tier_score": tier.value,
            "tier_missing": list(tier.missing),
        },
    )


def compute_graph(submission: Submission, task: Task, profile: Profile) -> TierOutput:
    """Tier 3: graph metrics of the execution trace (spec 001)."""
    from evalq.metrics.graph import graph_metrics

    if submission.trace is None:
        return TierOutput("skipped", {"reason": "the submission has no trace"})
    metrics = graph_metrics(
        submission.trace,
        task,
        tool_efficiency_weights=profile.graph.tool_efficiency_weights,
        coordination_quality_weights=profile.graph.coordination_quality_weights,
    )
    return TierOutput("ok", metrics.to_dict())


def judge_deadline_s(settings: Settings) -> float:
    """The judge's wall-time budget: 80% of the task's soft time limit.

    It stays inside the soft limit (so Celery never interrupts the judge mid-retry, which would
    make the tier task retry on top of the judge's own retries) and so inside the visibility
    timeout, which `celery_config` requires to exceed the hard limit.
    """
    return 0.8 * float(celery_config(settings)["task_soft_time_limit"])


def compute_judge(submission: Submission, task: Task, profile: Profile) -> TierOutput:
    """Tier 2: the LLM judge's rubrics (spec 001), or skipped when no judge is configured."""
    judge = judge_for(task.profile)
    if judge is None:
        return TierOutput("skipped", {"reason": "no judge configured (EVALQ_JUDGE_MODEL unset)"})
    settings = get_settings()
    outcome = judge.evaluate(submission, task, deadline_s=judge_deadline_s(settings))
    details = outcome.to_dict()
    if outcome.failed:
        first = outcome.errors[0] if outcome.errors else {"type": "JudgeFailed", "message": ""}
        return TierOutput("failed", details, error={**first, "errors": outcome.errors})
    return TierOutput("ok", details)


@shared_task(bind=True, name=TIER_TASKS["text"])
def tier_text(self: CeleryTask, submission_id: str) -> dict[str, str]:
    """Tier 1 for one submission."""
    return run_tier(self, submission_id, "text", compute_text)


@shared_task(bind=True, name=TIER_TASKS["judge"])
def tier_judge(self: CeleryTask, submission_id: str) -> dict[str, str]:
    """Tier 2 for one submission."""
    return run_tier(self, submission_id, "judge", compute_judge)


@shared_task(bind=True, name=TIER_TASKS["graph"])
def tier_graph(self: CeleryTask, submission_id: str) -> dict[str, str]:
    """Tier 3 for one submission."""
    return run_tier(self, submission_id, "graph", compute_graph)
