"""The producer commands: `evalq submit`, `evalq status` and `evalq task put`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from evalq.core.errors import EvalqError, InvalidInput
from evalq.producer.cli.output import console, fail, fail_with, require_broker, wait_with_progress

if TYPE_CHECKING:
    from evalq.core.schemas import Submission
    from evalq.service.client import Client


def submit(
    file: Annotated[Path, typer.Argument(help="JSONL file, one submission per line.")],
    no_wait: Annotated[bool, typer.Option("--no-wait", help="Enqueue and return.")] = False,
    skip_invalid: Annotated[
        bool, typer.Option("--skip-invalid", help="Submit the valid lines, report the rest.")
    ] = False,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for the results.")] = 3600,
) -> None:
    """Submit every submission in FILE; bad lines are reported as FILE:LINE: field: rule.

    With no EVALQ_BROKER_URL the submissions are evaluated in this process (as `evalq demo`
    does), so the command waits for them; --no-wait needs a broker.
    """
    from evalq.service.client import Client

    client = Client()
    if client.in_process and no_wait:
        fail_with("--no-wait needs EVALQ_BROKER_URL (with no broker, evaluation runs here)")
    good = valid_lines(file, client, skip_invalid=skip_invalid)
    try:
        results = client.submit_many(good)
    except EvalqError as error:
        fail(error)
    created = sum(r.created for r in results)
    console.print(f"submitted {len(results)} ({created} new, {len(results) - created} existing)")
    if not no_wait and results:
        try:
            statuses = wait_with_progress(client, [r.id for r in results], timeout=timeout)
        finally:
            client.close()
        failed = sum(s == "failed" for s in statuses.values())
        raise typer.Exit(1 if failed else 0)


def valid_lines(file: Path, client: Client, *, skip_invalid: bool) -> list[Submission]:
    """The submissions of FILE to send, once every bad line is reported on stderr.

    A line is bad when the HTTP API would refuse it as a body: not UTF-8, not JSON, a field
    breaking its rule, or a task that is not defined. Exits with status 2, nothing submitted,
    when FILE cannot be read or holds no submission, when a line is bad (unless
    ``skip_invalid``), or when no line is valid.
    """
    from evalq.producer.files import read_jsonl

    try:
        good, bad = read_jsonl(file)
    except InvalidInput as error:
        exit_on_file_problems(file, error.problems)
    if not good and not bad:
        typer.echo(
            f"error: {file} holds no submissions (empty or blank); nothing submitted", err=True
        )
        raise typer.Exit(2)
    unknown = client.unknown_tasks(submission.task_id for _, submission in good)
    bad += [(line, [("task_id", unknown[s.task_id])]) for line, s in good if s.task_id in unknown]
    good = [(line, s) for line, s in good if s.task_id not in unknown]
    for line, problems in sorted(bad, key=lambda item: item[0]):
        for field, rule in problems:
            typer.echo(f"{file}:{line}: {field}: {rule}", err=True)
    if bad and not skip_invalid:
        console.print(f"[red]{len(bad)} invalid line(s); nothing submitted[/red] (--skip-invalid)")
        raise typer.Exit(2)
    if not good:
        console.print(f"[red]no valid line in {file}; nothing submitted[/red]")
        raise typer.Exit(2)
    return [submission for _, submission in good]


def exit_on_file_problems(file: Path, problems: list[tuple[str, str]]) -> NoReturn:
    """Print each problem as ``FILE: field: rule`` (``FILE: rule`` for the file itself); exit 2."""
    for field, rule in problems:
        where = str(file) if field == "(file)" else f"{file}: {field}"
        typer.echo(f"{where}: {rule}", err=True)
    raise typer.Exit(2)


def status(
    submission_id: Annotated[
        str | None, typer.Argument(help="A submission id; omit it for the queue depths.")
    ] = None,
) -> None:
    """Status, scores and tier outcomes of one submission (JSON); with no id, queue depths."""
    from evalq.service.client import Client

    if submission_id is None:
        print_queue_depths()
        return
    try:
        result = Client().get_result(submission_id)
    except EvalqError as error:
        fail(error)
    console.print_json(json.dumps(result, default=str))


def print_queue_depths() -> None:
    """Print how many messages wait in each evalq queue (asked of the broker)."""
    from evalq.service.client import Client
    from evalq.workers.depths import queue_depths

    require_broker("queue depths")
    for queue, depth in queue_depths(Client().app).items():
        console.print(f"{queue:<12} {depth:>8} waiting", highlight=False)


def task_put(file: Path) -> None:
    """Create or replace the task(s) in FILE (a JSON object or list)."""
    from evalq.producer.files import read_tasks
    from evalq.service.client import Client

    try:
        tasks = read_tasks(file)
    except InvalidInput as error:
        exit_on_file_problems(file, error.problems)
    client = Client()
    try:
        for task in tasks:
            client.put_task(task)
    except EvalqError as error:
        fail(error)
    console.print(f"stored {len(tasks)} task(s)")
