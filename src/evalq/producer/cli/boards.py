"""The read side: `evalq leaderboard` and `evalq report`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from evalq.core.errors import EvalqError
from evalq.producer.cli.output import console, fail

if TYPE_CHECKING:
    from evalq.read.leaderboard import Leaderboard


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def print_leaderboard(board: Leaderboard) -> None:
    """Render a leaderboard as a table: the columns the task's kind ranks by first."""
    title = (
        f"{board.task_id} ({board.kind}, ranked by {board.ranking_key}): "
        f"baseline v{board.baseline_version}{' (default)' if board.baseline_is_default else ''}"
    )
    if board.variants is not None:
        variants = Table(title=f"{board.task_id}: variants")
        for column in ("rank", "variant", "runs", "pass rate", "median", "grade", "cost/pass"):
            variants.add_column(column)
        variants.add_column("uplift vs T0")
        for v in board.variants:
            variants.add_row(
                str(v.rank), v.variant, str(v.runs), _num(v.pass_rate, 2),
                _num(v.median_composite), v.grade or "-",
                str(v.cost_of_pass) if isinstance(v.cost_of_pass, str) else _num(v.cost_of_pass, 4),
                "-" if v.uplift is None else f"{v.uplift:+.1%}",
            )  # fmt: skip
        console.print(variants)
    table = Table(title=title)
    kind_columns = {
        "peerread": ["composite", "recommendation"],
        "suite": ["gate", "final"],
        "scylla": ["variant", "composite", "grade"],
        "arena": [],
    }[board.kind]
    columns = ["rank", "submission", "tool", "model", *kind_columns, "overall", "adj"]
    columns += ["eff", "speed", "cost", "correct", "pct", "not reported", "review", "status"]
    for column in columns:
        table.add_column(column)
    for e in board.entries:
        kind_cells = {
            "peerread": [_num(e.peerread), e.recommendation or "-"],
            "suite": [
                "-" if e.suite_passed is None else ("pass" if e.suite_passed else "blocked"),
                _num(e.suite_final_score),
            ],
            "scylla": [e.variant or "-", _num(e.scylla_composite), e.scylla_grade or "-"],
            "arena": [],
        }[board.kind]
        review = {"flagged": "held", "accepted": "accepted"}.get(e.review or "", "-")
        if e.flags:
            review += ": " + ",".join(e.flags)
        table.add_row(
            str(e.rank), e.submission_id, e.tool, e.model, *kind_cells,
            f"{e.overall:.2f}", f"{e.overall_adjusted:.2f}", f"{e.efficiency:.1f}",
            f"{e.speed:.1f}", f"{e.cost:.1f}", f"{e.correctness:.0f}", f"{e.percentile:.1f}",
            ",".join(e.not_reported) or "-", review,
            f"{e.status} (partial)" if e.partial else e.status,
        )  # fmt: skip
    console.print(table)
    ci = board.confidence_interval
    note = "" if ci["enough_data"] else " (not enough data)"
    console.print(
        f"  {ci['level']:.0%} CI of the mean {ci['of']}: [{ci['low']}, {ci['high']}]{note}; "
        "overall = Arena overall before the difficulty factor, adj = after it; "
        "not reported = counted as the worst value; held = flagged for review, left out of the "
        "baseline until accepted (evalq review accept ID)"
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
    """Write a task's report: the kind's verdict, then leaderboard, distributions, intervals,
    cost, variant uplift."""
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
