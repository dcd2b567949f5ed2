"""People's labels of runs from the command line: `evalq labels add|import|list|export`."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from evalq.core.errors import EvalqError, InvalidInput
from evalq.producer.cli.output import console, fail, working

labels_app = typer.Typer(
    help="People's labels of runs: what the judge's scores are checked against.",
    no_args_is_help=True,
)
INTEGER = re.compile(r"^[+-]?\d+$")


@labels_app.command("add")
def add(
    submission_id: Annotated[str, typer.Argument(help="The run labelled.")],
    labeller: Annotated[str, typer.Option(help="Who labels it (e.g. an e-mail address).")],
    score: Annotated[
        list[str] | None,
        typer.Option(help="RUBRIC=1..5, repeatable (technical_accuracy, constructiveness, ...)."),
    ] = None,
    recommendation: Annotated[
        str | None, typer.Option(help="accept, weak_accept, weak_reject or reject.")
    ] = None,
    passed: Annotated[
        bool | None, typer.Option("--pass/--fail", help="The task's pass/fail decision.")
    ] = None,
    note: Annotated[str | None, typer.Option(help="Free text.")] = None,
) -> None:
    """Record one person's label of a run (replacing their earlier label of it)."""
    from evalq.service.client import Client

    data: dict[str, Any] = {"submission_id": submission_id, "labeller": labeller}
    try:
        if score:
            data["scores"] = _scores(score)
        data |= {"recommendation": recommendation, "passed": passed, "note": note}
        label = Client().add_label({k: v for k, v in data.items() if v is not None})
    except EvalqError as error:
        fail(error)
    _say(f"labelled {label.submission_id} (task {label.task_id}) as {label.labeller}")


def _scores(items: list[str]) -> dict[str, Any]:
    """``RUBRIC=VALUE`` options as the label's scores (the values checked by the label's rules)."""
    scores: dict[str, Any] = {}
    for item in items:
        name, equals, value = item.partition("=")
        if not equals or not name:
            raise InvalidInput([("scores", f"--score {item!r}: takes RUBRIC=1..5")])
        scores[name] = int(value) if INTEGER.match(value.strip()) else value
    return scores


@labels_app.command("import")
def import_labels(
    path: Annotated[
        Path,
        typer.Argument(
            help="A CSV (with a header row) or JSONL file of at most 1000 labels (split larger "
            "files: a longer one is refused at its 1001st row, unread past it)."
        ),
    ],
    file_format: Annotated[
        str | None, typer.Option("--format", help="csv or jsonl; by default from the suffix.")
    ] = None,
) -> None:
    """Store every label of a file (at most 1000), or none: bad rows are named FILE:LINE: field.

    Every bad row, a label of a run that is not stored too, is named in one list in line
    order, one ``error:`` line each; exit 2 and nothing stored.
    """
    from evalq.producer.label_files import read_labels
    from evalq.service.client import Client

    if file_format not in (None, "csv", "jsonl"):
        fail(InvalidInput([("--format", "must be csv or jsonl")]))
    try:
        client = Client()
        with working(f"reading {path.name}"):
            numbered = read_labels(
                path,
                file_format,  # type: ignore[arg-type]
                unknown_runs=client.unknown_runs,
            )
        with working(f"storing {len(numbered)} labels"):
            stored = client.add_labels([label for _, label in numbered])
    except EvalqError as error:
        fail(error, outcome=f"no label of {path.name} stored")
    _say(f"stored {len(stored)} labels from {path.name}")


@labels_app.command("list")
def list_labels(
    task_id: Annotated[str | None, typer.Option("--task", help="Only this task's runs.")] = None,
    submission_id: Annotated[str | None, typer.Option("--run", help="Only this run.")] = None,
    labeller: Annotated[str | None, typer.Option(help="Only this labeller's labels.")] = None,
) -> None:
    """List stored labels by task, run and labeller."""
    from evalq.core.schemas import RUBRIC_NAMES
    from evalq.service.client import Client

    try:
        found = Client().labels(task_id=task_id, submission_id=submission_id, labeller=labeller)
    except EvalqError as error:
        fail(error)
    if not found:
        _say("no labels")
        return
    table = Table(title="labels")
    for column in ("task", "run", "labeller", *RUBRIC_NAMES, "decision", "note"):
        table.add_column(column)
    for label in found:
        decision = label.recommendation or (
            "" if label.passed is None else "pass" if label.passed else "fail"
        )
        scores = [str(label.scores.get(name, "")) for name in RUBRIC_NAMES]
        cells = (label.task_id, label.submission_id, label.labeller, *scores, decision)
        table.add_row(*map(escape, (*cells, label.note or "")))
    console.print(table)


@labels_app.command("queue")
def queue(
    task_id: Annotated[str, typer.Argument(help="The task.")],
    every: Annotated[
        bool, typer.Option("--all", help="Also the runs somebody labelled already.")
    ] = False,
) -> None:
    """Runs the judge cascade asks people to label: 'judge uncertain' first, then audited."""
    from evalq.service.client import Client

    try:
        found = Client().label_queue(task_id, unlabelled_only=not every).candidates
    except EvalqError as error:
        fail(error)
    if not found:
        _say(f"no run of {task_id} waits for a label")
        return
    for candidate in found:
        by = f" (labelled by {', '.join(candidate.labellers)})" if candidate.labellers else ""
        _say(f"{candidate.submission_id}\t{candidate.reason}{by}")


@labels_app.command("export")
def export(
    task_id: Annotated[str | None, typer.Option("--task", help="Only this task's runs.")] = None,
    file_format: Annotated[str, typer.Option("--format", help="csv or jsonl.")] = "csv",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here; default standard output.")
    ] = None,
) -> None:
    """Write stored labels as CSV or JSONL (`evalq labels import` reads them back)."""
    from evalq.producer.label_files import write_labels
    from evalq.service.client import Client

    if file_format not in ("csv", "jsonl"):
        fail(InvalidInput([("--format", "must be csv or jsonl")]))
    try:
        text = write_labels(Client().labels(task_id=task_id), file_format)  # type: ignore[arg-type]
    except EvalqError as error:
        fail(error)
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8", newline="")  # CSV lines end \r\n already


def _say(text: str) -> None:
    """Print a message that may carry ids as it is (no rich markup)."""
    console.print(text, markup=False, highlight=False, soft_wrap=True)
