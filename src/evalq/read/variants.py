"""A task's Scylla runs grouped by variant: the one grouping rule reports and the API share."""

from __future__ import annotations

from collections import defaultdict

from sqlalchemy.orm import Session

from evalq.core.results import EvaluationScores
from evalq.read.leaderboard import is_held
from evalq.scoring.scylla import ScyllaRun
from evalq.store import queries


def variant_runs(
    session: Session, *, task_id: str, include_held: bool = False
) -> dict[str, list[ScyllaRun]]:
    """Every evaluated run of the task that names a variant, by variant.

    A run belongs to the variant its submission named (stored with its Scylla scores by the
    merge); submissions without a variant are not part of any group, and runs held for review
    (flagged, not yet accepted) are not either unless ``include_held``.
    """
    runs: dict[str, list[ScyllaRun]] = defaultdict(list)
    for row, evaluation in queries.task_evaluations(session, task_id=task_id):
        if is_held(row.review) and not include_held:
            continue
        scylla = EvaluationScores.model_validate(evaluation.scores).scylla
        if scylla is not None:
            runs[scylla.variant].append(ScyllaRun.from_scores(scylla))
    return dict(runs)
