"""The read side: `evalq leaderboard` and `evalq report`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from evalq.core.errors import EvalqError
from evalq.producer.cli.output import console, fail


def print_leaderboard(board: Any) -> None:
    """Render a leaderboard as a table."""
    title = (
        f"{board.task_id}: baseline v{board.baseline_version}"
        f"{' (default)' if board.baseline_is_default else ''}"
    )
    table = Table(title=title)
    entries = board.entries
    optional = {  # columns shown only when some entry has a value
        "peerread": [None if e.peerread is None else f"{e.peerread:.3f}" for e in entries],
        "variant": [e.variant for e in entries],
        "grade": [e.scylla_grade for e in entries],
        "suite": [
            None if e.suite_passed is None else ("pass" if e.suite_passed else "blocked")
            for e in entries
        ],
        "flags": [",".join(e.flags) or None for e in entries],
    }
    shown = {name: values for name, values in optional.items() if any(values)}
    columns = ["rank", "submission", "tool", "model", "overall", "eff", "speed", "cost"]
    for column in [*columns, "correct", "pct", *shown, "status"]:
        table.add_column(column)
    for i, e in enumerate(entries):
        table.add_row(
            str(e.rank),
            e.submission_id,
            e.tool,
            e.model,
            f"{e.overall:.2f}",
            f"{e.efficiency:.1f}",
            f"{e.speed:.1f}{'*' if 'speed' in e.imputed else ''}",
            f"{e.cost:.1f}{'*' if 'cost' in e.imputed else ''}",
            f"{e.correctness:.0f}",
            f"{e.percentile:.1f}",
            *[values[i] or "-" for values in shown.values()],
            e.status,
        )
    console.print(table)
    ci = board.confidence_interval
    note = "" if ci["enough_data"] else " (not enough data)"
    console.print(
        f"  {ci['level']:.0%} CI of the overall mean: [{ci['low']}, {ci['high']}]{note}"
        "   * = imputed (no time / cost reported)"
    )


def leaderboard_command(
    task_id: str,
    tool: Annotated[str | None, typer.Option(help="Only this tool.")] = None,
    model: Annotated[str | None, typer.Option(help="Only this model.")] = None,
    variant: Annotated[str | None, typer.Option(help="Only this variant (T0..Tn).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Rank a task's evaluated submissions against its current baseline."""
    from evalq.read.leaderboard import leaderboard
    from evalq.store.db import session_scope

    try:
        with session_scope() as session:
            board = leaderboard(session, task_id=task_id, tool=tool, model=model, variant=variant)
    except EvalqError as error:
        fail(error)
    if as_json:
        console.print_json(json.dumps(board.to_dict()))
    else:
        print_leaderboard(board)


def report(
    task_id: str,
    output: Annotated[Path, typer.Option("--output", "-o", help="File to write.")] = Path(
        "report.html"
    ),
    fmt: Annotated[
        str, typer.Option("--format", help="html (self-contained page), csv or json.")
    ] = "html",
) -> None:
    """Write a task's report: leaderboard, score distributions, intervals, cost, variant uplift."""
    from evalq.report import render, report_data
    from evalq.store.db import session_scope

    try:
        with session_scope() as session:
            data = report_data(session, task_id=task_id)
        text = render(data, fmt)
    except EvalqError as error:
        fail(error)
    output.write_text(text, encoding="utf-8")
    console.print(f"wrote {output} ({len(data.entries)} submissions)", highlight=False)
