"""What is there: `evalq task list` and `evalq task submissions TASK`."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from evalq.core.status import STATUSES
from evalq.producer.cli.output import console


def task_list() -> None:
    """Every task with its kind, category, its submissions counted by status and its board's
    leader."""
    from evalq.read import served
    from evalq.store.db import session_scope

    with session_scope() as session:
        overviews = served.task_list(session).tasks
    if not overviews:
        console.print("no tasks yet: evalq task put FILE")
        return
    table = Table("task", "kind", "category", *STATUSES, "last activity", "leader")
    for overview in overviews:
        counts = [str(overview.statuses.get(status, 0)) for status in STATUSES]
        when = overview.last_activity
        table.add_row(
            escape(overview.id),
            overview.kind if overview.kind_named else f"{overview.kind} (derived)",
            escape(overview.category or "-"),
            *counts,
            when.isoformat(sep=" ", timespec="seconds") if when else "-",
            escape(overview.leader.text if overview.leader else "-"),
        )
    console.print(table)


def task_submissions(
    task_id: Annotated[str, typer.Argument(help="The task's id.")],
    status: Annotated[
        list[str] | None,
        typer.Option(help=f"Only this status ({', '.join(STATUSES)}); repeat for several."),
    ] = None,
    limit: Annotated[int, typer.Option(min=1, help="At most this many, newest first.")] = 50,
) -> None:
    """A task's submissions, most recently updated first: status, tool, model, variant."""
    from evalq.store import queries
    from evalq.store.db import session_scope

    wanted = status or []
    unknown = sorted(set(wanted) - set(STATUSES))
    if unknown:
        typer.echo(f"error: --status: {unknown[0]!r} is not one of {', '.join(STATUSES)}", err=True)
        raise typer.Exit(2)
    with session_scope() as session:
        queries.get_task(session, task_id=task_id)  # NotFound names an unknown task
        rows = queries.task_submissions(session, task_id=task_id, statuses=wanted, limit=limit)
        found = [
            (row.id, row.status, row.tool, row.model, row.variant or "-", row.updated_at)
            for row in rows
        ]
    table = Table("submission", "status", "tool", "model", "variant", "updated")
    for sid, state, tool, model, variant, updated in found:
        cells = (sid, state, tool, model, variant)
        table.add_row(*map(escape, cells), updated.isoformat(sep=" ", timespec="seconds"))
    console.print(table)
    console.print(f"{len(found)} submission(s)", highlight=False)
