"""Spec 000's batch scorer ("Batch Processing"): group by task, score, then update baselines.

The service scores one submission per merge (`evalq.scoring.evaluation`); this is the spec's
batch procedure, kept for the conformance tests that replay the spec's examples through it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from evalq.core.errors import InvalidInput, NotFound
from evalq.core.profile import Profile
from evalq.core.results import ArenaScores
from evalq.core.schemas import Submission, Task
from evalq.scoring.arena.baseline import Baseline, compute_baseline
from evalq.scoring.arena.outliers import OutlierFlag, detect_outliers
from evalq.scoring.arena.overall import score_arena_run
from evalq.scoring.arena.run import ArenaRun
from evalq.scoring.arena.validation import validate_evaluation


@dataclass(frozen=True)
class BatchResult:
    """What one batch produced.

    Attributes:
        scores: one score per submission, in the order the submissions were given.
        baselines: per task in the batch, the baseline recomputed from its history plus the
            batch's runs (to store for the next batch).
        outliers: flagged submissions of this batch (judged against the task's history too).
        problems: validation messages per submission id, only for submissions that have some.
    """

    scores: list[ArenaScores]
    baselines: dict[str, Baseline]
    outliers: list[OutlierFlag]
    problems: dict[str, list[str]]


def score_batch(
    submissions: Sequence[Submission],
    tasks: Mapping[str, Task],
    baselines: Mapping[str, Baseline],
    profile: Profile,
    *,
    history: Mapping[str, Sequence[ArenaRun]] | None = None,
    last_updated: str | None = None,
) -> BatchResult:
    """Score a batch of submissions, task by task, as the spec's batch pipeline.

    Every submission of a task is scored against the same baseline: the stored one in
    ``baselines``, or - when the task has none yet - one computed from ``history``. Only then is
    the task's baseline recomputed from its history plus the new runs (a resubmitted id replaces
    its earlier run), so the order of submissions within a batch never changes a score.

    Args:
        submissions: validated submissions; ids must be unique.
        tasks: task definitions by id; every submission's task must be there.
        baselines: current baselines by task id (may lack tasks).
        profile: the scoring profile (the Arena section and the prices).
        history: the runs each task already had (for the baseline update and outlier medians).
        last_updated: timestamp recorded in the new baselines.

    Raises:
        InvalidInput: two submissions share an id.
        NotFound: a submission's task is not in ``tasks``; nothing is scored.
    """
    ids = [sub.id for sub in submissions]
    if len(ids) != len(set(ids)):
        raise InvalidInput([("submissions", "submission ids must be unique within a batch")])
    unknown = sorted({sub.task_id for sub in submissions} - set(tasks))
    if unknown:
        raise NotFound(f"unknown task(s): {', '.join(unknown)}")
    past = history or {}
    by_task: dict[str, list[Submission]] = {}
    for sub in submissions:
        by_task.setdefault(sub.task_id, []).append(sub)

    scores: dict[str, ArenaScores] = {}
    new_baselines: dict[str, Baseline] = {}
    outliers: list[OutlierFlag] = []
    problems: dict[str, list[str]] = {}
    for task_id, task_subs in by_task.items():
        task = tasks[task_id]
        earlier = list(past.get(task_id, ()))
        baseline = baselines.get(task_id) or compute_baseline(earlier, profile.arena)
        runs = [ArenaRun.from_submission(sub, profile) for sub in task_subs]
        for sub, run in zip(task_subs, runs, strict=True):
            score = score_arena_run(run, task, sub.evidence, baseline, profile.arena)
            scores[sub.id] = score
            found = validate_evaluation(score, run)
            if found:
                problems[sub.id] = found
        new_ids = {run.submission_id for run in runs}
        combined = [run for run in earlier if run.submission_id not in new_ids] + runs
        new_baselines[task_id] = compute_baseline(
            combined, profile.arena, last_updated=last_updated
        )
        outliers += [
            flag
            for flag in detect_outliers(combined, profile.arena)
            if flag.submission_id in new_ids
        ]
    return BatchResult([scores[i] for i in ids], new_baselines, outliers, problems)
