"""A task's Scylla runs grouped by variant: the one grouping rule reports and the API share."""

from __future__ import annotations

from collections import defaultdict

from sqlalchemy.orm import Session

from evalq.core.results import EvaluationScores
from evalq.scoring.scylla import ScyllaRun
from evalq.store import queries


def variant_runs(session: Session, *, task_id: str) -> dict[str, list[ScyllaRun]]:
    """Every evaluated run of the task that names a variant, by variant.

    A run belongs to the variant its submission named (stored with its Scylla scores by the
    merge); submissions without a variant are not part of any group.
    """
    runs: dict[str, list[ScyllaRun]] = defaultdict(list)
    for _, evaluation in queries.task_evaluations(session, task_id=task_id):
        scylla = EvaluationScores.model_validate(evaluation.scores).scylla
        if scylla is not None:
            runs[scylla.variant].append(ScyllaRun.from_scores(scylla))
    return dict(runs)
