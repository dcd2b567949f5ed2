"""Storing an `ImportPlan`: what is new is created and evaluated, what is stored is left alone.

`import_file` is the one import every door calls (the CLI, ``POST /v1/imports/{format}``
and through it the HTTP clients), and `ImportAnswer` the one answer they give.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalq.producer.importers.answer import ImportAnswer
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


def import_file(
    client: Client,
    name: str,
    raw: bytes,
    *,
    columns: Mapping[str, Any] | None = None,
    apply: bool = False,
) -> tuple[ImportAnswer, list[Submitted]]:
    """Map ``raw`` (a file in the format ``name``), check it against the store and, with
    ``apply``, store and enqueue what is new; the answer, and the runs enqueued.

    Raises:
        InvalidInput: the format, the columns or the file is refused; nothing is stored.
    """
    from evalq.core.errors import InvalidInput
    from evalq.producer.importers.formats import MAPPED, plan_file
    from evalq.producer.importers.generic import ColumnMap

    if columns is not None and name not in MAPPED:
        raise InvalidInput([(next(iter(columns), "columns"), f"only for {' and '.join(MAPPED)}")])
    mapping = None if columns is None else ColumnMap.of(columns)
    plan = plan_file(name, raw, mapping)
    check = check_plan(client, plan)
    answer = ImportAnswer(
        format=name,
        applied=apply,
        new_tasks=list(check.new_tasks),
        new_submissions=list(check.new_submissions),
        imported_before=list(check.imported_before),
    )
    return answer, apply_plan(client, plan, check) if apply else []
