"""`evalq task audit T`: probe a task's checks with outputs no sound check should pass."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.markup import escape

from evalq.core.errors import EvalqError
from evalq.producer.cli.output import console, fail


def task_audit(
    task_id: str,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Score an empty output, the task's text echoed, a refusal and other tasks' best runs
    against the task's success criteria and references; any that passes marks the task
    unverified on its board and in the gate (exit status 1 then; docs/audit.md)."""
    from evalq.service.client import Client

    try:
        found = Client().audit_task(task_id)
    except EvalqError as error:
        fail(error)
    if as_json:
        sys.stdout.write(found.model_dump_json(indent=2) + "\n")
    else:
        console.print(f"{task_id}: {found.status}: {escape(found.reason)}", highlight=False)
        for probe in found.probes:
            said = "passed" if probe.passed else "refused"
            source = f" ({probe.source})" if probe.source else ""
            console.print(f"  {probe.probe}{source}: {said}", highlight=False)
    if found.status == "unverified":
        raise typer.Exit(1)
