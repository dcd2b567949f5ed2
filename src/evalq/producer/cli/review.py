"""Manual review of outlier runs: `evalq review list`, `evalq review accept` and
`evalq review unaccept` (each decision with its reason and who decided, recorded).

A run the merge flags for review is left out of its task's baseline until a person accepts it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from evalq.core.errors import EvalqError
from evalq.producer.cli.output import console, fail

if TYPE_CHECKING:  # its module holds pydantic models: --help and --version need none
    from evalq.core.review_decisions import ReviewAction

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
    _say(
        "  left out of their task's baseline until accepted: "
        "evalq review accept ID --reason TEXT [--by NAME]"
    )


Reason = Annotated[
    str | None,
    typer.Option(help="Why (required; 1 to 500 characters). Recorded with who and when."),
]
By = Annotated[
    str | None,
    typer.Option(help="Who decides (recorded); default EVALQ_ACTOR."),
]


@review_app.command("accept")
def accept(
    submission_id: Annotated[str, typer.Argument(help="The flagged submission's id.")],
    reason: Reason = None,
    by: By = None,
) -> None:
    """Accept a held submission: its task's baseline counts it again (the task's runs are
    scored against the moved baseline and may change places). Undo: evalq review unaccept."""
    _decide(submission_id, "accept", reason=reason, by=by)


@review_app.command("unaccept")
def unaccept(
    submission_id: Annotated[str, typer.Argument(help="The accepted submission's id.")],
    reason: Reason = None,
    by: By = None,
) -> None:
    """Undo an accept: the submission is held for review again, out of its task's baseline."""
    _decide(submission_id, "unaccept", reason=reason, by=by)


def _decide(
    submission_id: str, action: ReviewAction, *, reason: str | None, by: str | None
) -> None:
    from evalq.service.client import Client

    client = Client()
    try:
        change = client.accept_review if action == "accept" else client.unaccept_review
        done = change(submission_id, reason=reason or "", by=by)
    except EvalqError as error:
        fail(error)
    if not done.changed:
        state = "accepted" if action == "accept" else "held for review"
        _say(f"{submission_id} was already {state}; nothing changed")
        return
    decision = done.decision
    assert decision is not None  # a change records one
    what = (
        f"accepted {submission_id}; the baseline of {done.task_id} counts it"
        if action == "accept"
        else f"un-accepted {submission_id}: held for review again, out of the baseline of "
        f"{done.task_id}"
    )
    _say(f"{what} (version {done.baseline_version})")
    when = f"{decision.decided_at:%Y-%m-%d %H:%M:%S} UTC"
    _say(f"  recorded: {decision.by} at {when}: {decision.reason}")


def _say(text: str) -> None:
    """Print a message that may carry ids as it is (no rich markup or highlighting)."""
    console.print(text, markup=False, highlight=False)
