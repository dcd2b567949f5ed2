"""Send a submission's chord to the broker, by task name (no tier code is imported here)."""

from __future__ import annotations

from celery import Celery, chord, group

from evalq.core.schemas import TIERS
from evalq.workers.names import MERGE_TASK, ROUTES, TIER_TASKS


def chord_ids(submission_id: str, attempt: int) -> dict[str, str]:
    """Deterministic task ids of one enqueue attempt, so a redelivery is recognisable."""
    ids: dict[str, str] = {tier: f"{submission_id}:{tier}:{attempt}" for tier in TIERS}
    ids["group"] = f"{submission_id}:group:{attempt}"
    ids["merge"] = f"{submission_id}:merge:{attempt}"
    return ids


def parse_chord_id(task_id: str) -> tuple[str, int] | None:
    """(submission id, attempt) of a tier or merge task id from `chord_ids`; None for others."""
    parts = task_id.rsplit(":", 2)
    if len(parts) != 3 or parts[1] not in (*TIERS, "merge") or not parts[2].isdigit():
        return None
    return parts[0], int(parts[2])


def enqueue(app: Celery, submission_id: str, attempt: int) -> str:
    """Publish chord(group(text, judge, graph), merge) for a stored submission; returns merge id."""
    ids = chord_ids(submission_id, attempt)
    header = group(
        [
            app.signature(
                TIER_TASKS[tier],
                args=[submission_id],
                task_id=ids[tier],
                queue=ROUTES[TIER_TASKS[tier]]["queue"],
            )
            for tier in TIERS
        ],
        task_id=ids["group"],
    )
    callback = app.signature(
        MERGE_TASK, args=[submission_id], task_id=ids["merge"], queue=ROUTES[MERGE_TASK]["queue"]
    )
    chord(header, callback, app=app).apply_async()
    return ids["merge"]
