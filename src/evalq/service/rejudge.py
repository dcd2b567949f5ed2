"""`evalq judge rejudge TASK`: judge a task's runs again with the configured judge, as a new
series beside the scores they have (docs/judge.md, "Judge changes").

Nothing is overwritten: each judgment is appended to ``judged_results`` (`evalq.store.judged`)
and the runs' scores, tier rows and evaluations stay as their judge left them. Without a
count, it draws the bridging sample: the runs the previous judge scored (held runs left out,
in an order drawn with a seed), judged until the bridge's pairs reach the count its power
needs (`evalq.judge.bridge`), or the runs run out.
"""

from __future__ import annotations

import random

from sqlalchemy import select

from evalq.core.errors import InvalidInput
from evalq.core.judge_series import JudgeHistory, series_id
from evalq.core.profile import profile_named
from evalq.core.settings import Settings
from evalq.judge.bridge import bridge_start
from evalq.read.judge_series import check_detect, judge_history
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.store.judged import append_judged, judged_of_tasks
from evalq.store.models import EvaluationRow, SubmissionRow

MAX_RUNS = 10_000
"""The most runs one re-judge judges (``runs``, and a bridge whose count is out of reach)."""
DEADLINE_S = 300.0
"""One run's judging budget (the judge's own retries and waits included)."""


def _check(runs: int | None, detect: float | None) -> None:
    check_detect(detect)
    if runs is not None and not 1 <= runs <= MAX_RUNS:
        raise InvalidInput([("runs", f"a whole number from 1 to {MAX_RUNS}")])


def rejudge(
    url: str | None,
    *,
    task_id: str,
    settings: Settings,
    runs: int | None = None,
    detect: float | None = None,
    seed: int = 0,
) -> JudgeHistory:
    """Judge ``task_id``'s runs again with ``settings``' judge and return the task's judge
    history with the bridge this wrote.

    Args:
        url: the store (None: ``settings``').
        runs: judge this many runs the judge has not judged yet (any scoring judge's); None:
            the bridging sample (the previous judge's runs, as many as the bridge needs).
        detect: the bias the bridge is sized for, on the judge's [0, 1] scale.
        seed: the order runs are drawn in.

    Raises:
        NotFound: no such task.
        InvalidInput: on ``runs`` or ``detect``; no judge model configured.
    """
    _check(runs, detect)
    from evalq.judge import build_judge

    with session_scope(url) as session:
        task = queries.get_task(session, task_id=task_id)
        profile = profile_named(task.profile, settings)
        evaluated = set(
            session.scalars(
                select(SubmissionRow.id)
                .join(EvaluationRow, EvaluationRow.submission_id == SubmissionRow.id)
                .where(SubmissionRow.task_id == task_id, SubmissionRow.review.is_(None))
            )
        )
        judged = judged_of_tasks(session, task_ids=[task_id])
    judge = build_judge(settings, profile, redis=None)
    if judge is None:
        raise InvalidInput([("judge_model", "no judge configured (EVALQ_JUDGE_MODEL)")])
    scoring = {j.submission_id: j.series for j in judged if j.source == "tier"}
    alpha = round(1 - profile.arena.confidence_level, 12)
    latest = next((j.series for j in reversed(judged) if j.source == "tier"), None)
    order = sorted(evaluated)
    random.Random(seed).shuffle(order)
    order.sort(key=lambda run: scoring.get(run) == latest)  # other judges' runs first (stable)
    seen = {(j.submission_id, j.series) for j in judged}
    new: str | None = None
    done = 0
    for submission_id in order:
        # the first judgment names the new series; runs it already judged are not asked again
        if new is not None and (
            (submission_id, new) in seen or (runs is None and scoring.get(submission_id) == new)
        ):
            continue  # a bridge pairs the other judges' runs with the new judge's
        with session_scope(url) as session:
            job = queries.load_job(session, submission_id=submission_id, settings=settings)
        result = judge.evaluate(job.submission, job.task, deadline_s=DEADLINE_S)
        if result.identity is None:
            continue
        new = new or series_id(result.identity)
        if (submission_id, new) in seen or scoring.get(submission_id) == new:
            continue  # this run's score is already this judge's
        with session_scope(url) as session:
            if append_judged(session, submission_id=submission_id, result=result, source="rejudge"):
                done += 1
        if (runs is not None and done >= runs) or done >= MAX_RUNS:
            break
        if runs is not None:
            continue
        if done < bridge_start(alpha):
            continue
        with session_scope(url) as session:
            history = judge_history(session, task_id=task_id, detect=detect, settings=settings)
        ending = [b for b in history.bridges if b.new == new or b.old == new]
        if ending and all(b.needed is not None and b.pairs >= b.needed for b in ending):
            break
    with session_scope(url) as session:
        return judge_history(session, task_id=task_id, detect=detect, settings=settings)
