"""The session sweep: a session quiet for EVALQ_SESSION_QUIET_S is evaluated as a unit.

The mechanism is the trace sweep's (`evalq.service.trace_sweep`), in the same beat entry or
API thread: a session is due once no turn of it was merged for the quiet period, a sweep claims
it with a conditional UPDATE (of concurrent sweeps one wins; a claim older than
EVALQ_LOST_AFTER_S is taken again), scores its turns (`evalq.scoring.session`) and stores the
scores only if no turn reopened it meanwhile. A turn merged after the session's evaluation
(a late turn) opens it again, and it is evaluated once more when quiet again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta

from evalq.core.results import EvaluationScores, JudgeResult
from evalq.core.schemas import STORED, Submission, Task
from evalq.core.settings import Settings
from evalq.scoring.session import score_session, session_turn, transcript
from evalq.store import queries
from evalq.store import sessions as stored
from evalq.store.db import session_scope

log = logging.getLogger(__name__)

SWEEP_MOST = 200
"""Most sessions one sweep evaluates; the next sweep takes the rest."""

TranscriptJudge = Callable[[Submission, Task], JudgeResult | None]
"""The deployment's judge over a session's transcript (`evalq.scoring.session.transcript`):
its result, or None when no judge is configured. The sweep's caller provides it (the judge is
a worker's resource: `evalq.tasks.tiers.judge_transcript`)."""


def sweep_sessions(
    url: str, settings: Settings, *, judge: TranscriptJudge | None = None
) -> list[tuple[str, str]]:
    """Evaluate every due session (with ``judge`` over each transcript, when given); the
    (task id, session id) of those whose scores were stored."""
    quiet = timedelta(seconds=settings.session_quiet_s)
    reclaim = timedelta(seconds=max(settings.lost_after_s, 10))
    with session_scope(url) as session:
        due = stored.due_sessions(session, quiet=quiet, reclaim_after=reclaim, limit=SWEEP_MOST)
    done: list[tuple[str, str]] = []
    for task_id, session_id in due:
        if evaluate_session(
            url, task_id=task_id, session_id=session_id, quiet=quiet, reclaim=reclaim, judge=judge
        ):
            done.append((task_id, session_id))
    return done


def evaluate_session(
    url: str,
    *,
    task_id: str,
    session_id: str,
    quiet: timedelta,
    reclaim: timedelta,
    judge: TranscriptJudge | None = None,
) -> bool:
    """Claim, score and store one due session; whether its scores were stored."""
    with session_scope(url) as session:
        claimed_at = stored.claim_session(
            session, task_id=task_id, session_id=session_id, quiet=quiet, reclaim_after=reclaim
        )
    if claimed_at is None:
        return False
    with session_scope(url) as session:
        task = queries.get_task(session, task_id=task_id)
        rows = stored.stored_turns(session, task_id=task_id, session_id=session_id)
    if not rows:  # its runs were deleted: nothing to score
        return False
    runs = [Submission.model_validate(row.payload, context=STORED) for row in rows]
    scores = score_session(
        [
            session_turn(task, run, EvaluationScores.model_validate(row.scores), row.status)
            for run, row in zip(runs, rows, strict=True)
        ]
    )
    if judge is not None:
        try:
            judged = judge(transcript(runs), task)
        except Exception:  # the judge's own faults are data; anything else is one log line
            log.warning("the judge failed on session %s of %s", session_id, task_id, exc_info=True)
            scores = scores.model_copy(update={"judge_failed": True})
        else:
            if judged is not None:
                update = {"judge": judged.scores, "judge_failed": judged.failed}
                scores = scores.model_copy(update=update)
    with session_scope(url) as session:
        kept = stored.store_scores(
            session, task_id=task_id, session_id=session_id, claimed_at=claimed_at, scores=scores
        )
    if not kept:
        log.info(
            "session %s of %s got a turn while evaluated: evaluated again", session_id, task_id
        )
    return kept
