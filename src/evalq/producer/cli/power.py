"""`evalq plan TASK --detect D`: how many runs per variant or agent a comparison needs."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from evalq.core.errors import EvalqError
from evalq.producer.cli.output import console, fail


def plan_command(
    task_id: str,
    detect: Annotated[
        float | None,
        typer.Option(
            help="The difference in the task's ranking score to detect; default: the "
            "profile's power.detect, else a tenth of the score's scale."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Runs per variant or agent the task's observed noise needs for the paired test to
    detect --detect with 80% power at the task's alpha (docs/power.md)."""
    from evalq.read.power import task_plan
    from evalq.store.db import session_scope

    try:
        with session_scope() as session:
            found = task_plan(session, task_id=task_id, detect=detect)
    except EvalqError as error:
        fail(error)
    if as_json:
        sys.stdout.write(found.model_dump_json(indent=2) + "\n")
        return
    runs = "-" if found.runs is None else str(found.runs)
    console.print(f"{found.task_id}: {runs} runs per {found.groups_by}", highlight=False)
    console.print(found.note, highlight=False)
