"""Storing an `ImportPlan`: what is new is created and evaluated, what is stored is left alone."""

from __future__ import annotations

from dataclasses import dataclass

from evalq.producer.importers.plan import ImportPlan
from evalq.service.client import Client
from evalq.service.submitted import Submitted
from evalq.store import queries
from evalq.store.db import session_scope


@dataclass(frozen=True)
class ImportCheck:
    """A plan set against the store: the ids it would create and those already imported."""

    new_tasks: tuple[str, ...]
    new_submissions: tuple[str, ...]
    imported_before: tuple[str, ...]


def check_plan(client: Client, plan: ImportPlan) -> ImportCheck:
    """Which of the plan's tasks and submissions the store lacks (a dry run reads only)."""
    missing_tasks = client.unknown_tasks(task.id for task in plan.tasks)
    ids = [submission.id for submission in plan.submissions]
    with session_scope(client.url) as session:
        stored = queries.status_counts(session, ids=ids)
    return ImportCheck(
        new_tasks=tuple(t.id for t in plan.tasks if t.id in missing_tasks),
        new_submissions=tuple(i for i in ids if i not in stored),
        imported_before=tuple(i for i in ids if i in stored),
    )


def apply_plan(client: Client, plan: ImportPlan, check: ImportCheck) -> list[Submitted]:
    """Create the new tasks, then store and enqueue the new submissions in one batch.

    A task already stored is not replaced (a team may have refined it since the first
    import); a submission already stored is "imported before", whatever its content.
    """
    new_tasks = set(check.new_tasks)
    for task in plan.tasks:
        if task.id in new_tasks:
            client.put_task(task)
    new = set(check.new_submissions)
    submissions = [s for s in plan.submissions if s.id in new]
    return client.submit_many(submissions) if submissions else []
