"""Sessions from the command line: `evalq session show|board` (docs/sessions.md)."""

from __future__ import annotations

from typing import Annotated

import typer

from evalq.core.errors import EvalqError
from evalq.producer.cli.output import console, fail

session_app = typer.Typer(
    help="Sessions: runs sharing a conversation id, evaluated as a unit.", no_args_is_help=True
)


@session_app.command("show")
def show(
    session_id: Annotated[str, typer.Argument(help="The conversation id.")],
    task_id: Annotated[
        str | None, typer.Option(help="The task, when several have a session of this id.")
    ] = None,
) -> None:
    """Print the session (its turns, status and scores) as JSON."""
    from evalq.service.client import Client

    try:
        found = Client().session(session_id, task_id=task_id)
    except EvalqError as error:
        fail(error)
    _say(found.model_dump_json(indent=2))


@session_app.command("board")
def board(
    task_id: Annotated[str, typer.Argument(help="The task's id.")],
    limit: Annotated[int, typer.Option(help="Most rows (1..1000).")] = 100,
) -> None:
    """Print the task's session board: rank, session, turns, passed, turns to success, score."""
    from evalq.service.client import Client

    try:
        found = Client().session_board(task_id, limit=limit)
    except EvalqError as error:
        fail(error)
    _say(f"{found.evaluated} evaluated session(s) of task {task_id}")
    for row in found.sessions:
        rank = str(row.rank) if row.rank else "-"
        passed = "-" if row.passed is None else "passed" if row.passed else "not passed"
        score = "-" if row.score is None else f"{row.score:.4f}"
        to_success = row.turns_to_success or "-"
        _say(
            f"{rank}  {row.session_id}  {row.status}  {row.turns} turn(s)  {passed}  "
            f"first success at turn {to_success}  score {score}"
        )


def _say(text: str) -> None:
    console.print(text, markup=False, highlight=False, soft_wrap=True)
