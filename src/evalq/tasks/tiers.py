"""The three tier tasks. Each is a thin adapter around one pure function."""

from __future__ import annotations

from celery import Task as CeleryTask
from celery import shared_task

from evalq.core.applicable import NO_JUDGE, NO_REFERENCES, NO_TRACE
from evalq.core.profile import profile_named
from evalq.core.results import ErrorRecord, JudgeResult, TierOutcome
from evalq.core.schemas import Submission, Task
from evalq.core.settings import Settings, get_settings
from evalq.store.queries import Job
from evalq.tasks.resources import judge_for, reading_batcher, score_batcher
from evalq.tasks.runner import run_tier
from evalq.workers.app import celery_config
from evalq.workers.names import TIER_TASKS


def compute_text(job: Job) -> TierOutcome:
    """Tier 1: similarity of the output to the task's references (spec 001).

    The model's work goes through the process's batcher: tier-1 tasks running at once in a
    worker's threads are scored in one batch, each batch in one of the CPU slots
    (`evalq.tasks.resources.score_batcher`). First the output is read for instructions to
    its evaluator, by pattern and by meaning (`evalq.scoring.injection.scan`: the sentences go
    through the same batcher, on the bundled model), once per run; the similarity reads the
    output without the marked sentences, and the marks are stored, also when the task has no
    references (the tier is then skipped with them).
    """
    from evalq.metrics.instructions import InstructionReader
    from evalq.metrics.text import text_result
    from evalq.scoring.injection import scan

    task, profile = job.task, job.profile
    settings = get_settings()
    found = scan(job.submission.output, InstructionReader(reading_batcher(profile, settings).read))
    if not task.reference_outputs:
        return TierOutcome(
            tier="text", status="skipped", reason=NO_REFERENCES, injection=found.marks
        )
    result = text_result(
        found.clean,
        task.reference_outputs,
        job.submission.usage.execution_time,
        profile=profile.text,
        semantic=score_batcher(profile, settings),
        context=task.context,
    )
    if found.marks:
        result = result.model_copy(update={"injection": found.marks})
    return TierOutcome(tier="text", status="ok", result=result)


def compute_graph(job: Job) -> TierOutcome:
    """Tier 3: graph metrics of the execution trace (spec 001)."""
    from evalq.metrics.graph import graph_metrics

    if job.submission.trace is None:
        return TierOutcome(tier="graph", status="skipped", reason=NO_TRACE)
    result = graph_metrics(
        job.submission.trace,
        job.task,
        tool_efficiency_weights=job.profile.graph.tool_efficiency_weights,
        coordination_quality_weights=job.profile.graph.coordination_quality_weights,
    )
    return TierOutcome(tier="graph", status="ok", result=result)


def judge_deadline_s(settings: Settings) -> float:
    """The judge's wall-time budget: 80% of the task's soft time limit.

    It stays inside the soft limit (so Celery never interrupts the judge mid-retry, which would
    make the tier task retry on top of the judge's own retries) and so inside the visibility
    timeout, which `celery_config` requires to exceed the hard limit.
    """
    return 0.8 * float(celery_config(settings)["task_soft_time_limit"])


def judge_transcript(transcript: Submission, task: Task) -> JudgeResult | None:
    """The deployment's judge over a session's transcript (`evalq.service.sessions`), as tier 2
    judges one run; None when no judge is configured."""
    settings = get_settings()
    judge = judge_for(profile_named(task.profile, settings), settings)
    if judge is None:
        return None
    return judge.evaluate(transcript, task, deadline_s=judge_deadline_s(settings))


def compute_judge(job: Job) -> TierOutcome:
    """Tier 2: the LLM judge's rubrics (spec 001), or skipped when no judge is configured.

    The output is read by the injection patterns only (`evalq.scoring.injection.scan` without
    a reader: no model in a judge worker); a run they mark is judged with and without the
    marked sentences, each rubric keeping the lower score (`evalq.judge.marked`). What only
    tier 1's meaning pass marks holds the run at merge (`evalq.scoring.injection.
    judged_as_written`).
    """
    from evalq.judge.marked import judge_marked
    from evalq.scoring.injection import scan

    settings = get_settings()
    judge = judge_for(job.profile, settings)
    if judge is None:
        return TierOutcome(tier="judge", status="skipped", reason=NO_JUDGE)
    found = scan(job.submission.output)
    result = judge_marked(
        judge,
        job.submission,
        job.task,
        marks=found.marks,
        clean=found.clean,
        deadline_s=judge_deadline_s(settings),
    )
    if result.failed:
        first = result.errors[0] if result.errors else ErrorRecord(type="JudgeFailed", message="")
        error = first.model_copy(update={"errors": result.errors, "tier": "judge"})
        return TierOutcome(tier="judge", status="failed", result=result, error=error)
    return TierOutcome(tier="judge", status="ok", result=result)


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
