"""`evalq gate`: exit non-zero when a candidate group regresses against a baseline group."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from evalq.core.errors import EvalqError
from evalq.producer.cli.output import console, fail


def gate_command(
    tasks: Annotated[
        str, typer.Argument(help="A task id, ids separated by commas, or a glob ('arena-*').")
    ],
    by: Annotated[str, typer.Option("--by", help="model, tool, variant or metadata.KEY.")],
    baseline: Annotated[str, typer.Option(help="The group gated against (its value of --by).")],
    candidate: Annotated[str, typer.Option(help="The group gated (its value of --by).")],
    margin: Annotated[
        float, typer.Option(help="The drop allowed, on the tasks' score's scale.")
    ] = 0.0,
    too_few: Annotated[
        str, typer.Option("--too-few", help="pass or fail when too few data decide.")
    ] = "fail",
    junit: Annotated[
        Path | None, typer.Option(help="Write JUnit XML: a testcase per task.")
    ] = None,
    markdown: Annotated[
        Path | None, typer.Option(help="Write a Markdown summary (a pull request comment).")
    ] = None,
    seed: Annotated[int, typer.Option(min=0, max=2**32 - 1, help="Seed of every draw.")] = 0,
    include_held: Annotated[
        bool, typer.Option("--include-held", help="Gate the runs held for review too.")
    ] = False,
) -> None:
    """Gate a candidate against a baseline: exit 0 pass, 1 regression, 2 unusable input,
    3 too few data to decide, 4 a task unverified, 5 a task's scores mix judges across a
    break not yet bridged (evalq judge rejudge)."""
    from evalq.read import served
    from evalq.report.gate_files import junit as junit_xml
    from evalq.report.gate_files import markdown as markdown_text
    from evalq.store.db import session_scope

    if too_few not in ("pass", "fail"):
        raise typer.BadParameter("one of pass, fail", param_hint="--too-few")
    try:
        with session_scope() as session:
            report = served.gate_report(
                session,
                tasks=tasks,
                by=by,
                baseline=baseline,
                candidate=candidate,
                margin=margin,
                too_few=too_few,  # type: ignore[arg-type]
                seed=seed,
                include_held=include_held,
            )
    except EvalqError as error:
        fail(error)
    for task in report.tasks:
        console.print(f"{task.verdict}: {escape(task.message)}", highlight=False)
    console.print(escape(report.message), highlight=False)
    if junit is not None:
        junit.write_text(junit_xml(report), encoding="utf-8")
    if markdown is not None:
        markdown.write_text(markdown_text(report), encoding="utf-8")
    raise typer.Exit(report.exit_status)
