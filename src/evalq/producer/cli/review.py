"""Manual review of outlier runs: `evalq review list` and `evalq review accept`.

A run the merge flags for review is left out of its task's baseline until a person accepts it.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from evalq.core.errors import EvalqError
from evalq.producer.cli.output import console, fail

review_app = typer.Typer(
    help="Runs flagged for review: left out of their task's baseline until accepted.",
    no_args_is_help=True,
)


@review_app.command("list")
def list_flagged(
    task: Annotated[str | None, typer.Option(help="Only this task's submissions.")] = None,
    offset: Annotated[int, typer.Option(min=0, help="Held runs to skip (100 are listed).")] = 0,
) -> None:
    """List the submissions flagged for review and not yet accepted."""
    from evalq.read import served
    from evalq.store.db import session_scope

    with session_scope() as session:
        held = served.held_runs(session, task_id=task, offset=offset)
    if not held.total:
        _say("no submissions flagged for review")
        return
    table = Table(title=f"flagged for review ({held.total})")
    for column in ("submission", "task", "tool", "model", "why"):
        table.add_column(column)
    for run in held.runs:
        why = ", ".join(run.flags) or "flagged"
        # ids are data, not rich markup
        table.add_row(*map(escape, (run.id, run.task_id, run.tool, run.model, why)))
    console.print(table)
    if held.offset + len(held.runs) < held.total:
        listed = held.offset + len(held.runs)
        _say(f"  {len(held.runs)} from {held.offset} listed: --offset {listed} for more")
    _say("  left out of their task's baseline until accepted: evalq review accept ID")


@review_app.command("accept")
def accept(
    submission_id: Annotated[str, typer.Argument(help="The flagged submission's id.")],
) -> None:
    """Accept a flagged submission: its task's baseline counts it again."""
    from evalq.service.client import Client
    from evalq.store import queries
    from evalq.store.db import session_scope

    client = Client()
    try:
        with session_scope(client.url) as session:
            row = queries.get_submission_row(session, submission_id=submission_id)
            already, task_id = row.review == "accepted", row.task_id
        version = client.accept_review(submission_id)
    except EvalqError as error:
        fail(error)
    if already:
        _say(f"{submission_id} was already accepted; nothing changed")
        return
    _say(f"accepted {submission_id}; the baseline of {task_id} counts it (version {version})")


def _say(text: str) -> None:
    """Print a message that may carry ids as it is (no rich markup or highlighting)."""
    console.print(text, markup=False, highlight=False)
