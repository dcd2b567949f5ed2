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
from datetime import timedelta

from evalq.core.results import EvaluationScores
from evalq.core.schemas import STORED, Submission
from evalq.core.settings import Settings
from evalq.scoring.session import score_session, session_turn
from evalq.store import queries
from evalq.store import sessions as stored
from evalq.store.db import session_scope

log = logging.getLogger(__name__)

SWEEP_MOST = 200
"""Most sessions one sweep evaluates; the next sweep takes the rest."""


def sweep_sessions(url: str, settings: Settings) -> list[tuple[str, str]]:
    """Evaluate every due session; the (task id, session id) of those whose scores were
    stored."""
    quiet = timedelta(seconds=settings.session_quiet_s)
    reclaim = timedelta(seconds=max(settings.lost_after_s, 10))
    with session_scope(url) as session:
        due = stored.due_sessions(session, quiet=quiet, reclaim_after=reclaim, limit=SWEEP_MOST)
    done: list[tuple[str, str]] = []
    for task_id, session_id in due:
        if evaluate_session(
            url, task_id=task_id, session_id=session_id, quiet=quiet, reclaim=reclaim
        ):
            done.append((task_id, session_id))
    return done


def evaluate_session(
    url: str, *, task_id: str, session_id: str, quiet: timedelta, reclaim: timedelta
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
        turns = [
            session_turn(
                task,
                Submission.model_validate(turn.payload, context=STORED),
                EvaluationScores.model_validate(turn.scores),
                turn.status,
            )
            for turn in stored.stored_turns(session, task_id=task_id, session_id=session_id)
        ]
    if not turns:  # its runs were deleted: nothing to score
        return False
    scores = score_session(turns)
    with session_scope(url) as session:
        kept = stored.store_scores(
            session, task_id=task_id, session_id=session_id, claimed_at=claimed_at, scores=scores
        )
    if not kept:
        log.info(
            "session %s of %s got a turn while evaluated: evaluated again", session_id, task_id
        )
    return kept
