"""The producer commands: `evalq submit`, `evalq status` and `evalq task put`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from evalq.core.errors import EvalqError
from evalq.producer.cli.output import console, fail, fail_with, require_broker, wait_with_progress
from evalq.producer.client import Client
from evalq.producer.files import read_jsonl, read_tasks


def submit(
    file: Annotated[Path, typer.Argument(help="JSONL file, one submission per line.")],
    no_wait: Annotated[bool, typer.Option("--no-wait", help="Enqueue and return.")] = False,
    skip_invalid: Annotated[
        bool, typer.Option("--skip-invalid", help="Submit the valid lines, report the rest.")
    ] = False,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for the results.")] = 3600,
) -> None:
    """Submit every submission in FILE; bad lines are reported by line number.

    With no EVALQ_BROKER_URL the submissions are evaluated in this process (as `evalq demo`
    does), so the command waits for them; --no-wait needs a broker.
    """
    client = Client()
    if client.in_process and no_wait:
        fail_with("--no-wait needs EVALQ_BROKER_URL (with no broker, evaluation runs here)")
    good, bad = read_jsonl(file)
    for line, problems in bad:
        for field, rule in problems:
            typer.echo(f"{file}:{line}: {field}: {rule}", err=True)
    if bad and not skip_invalid:
        console.print(f"[red]{len(bad)} invalid line(s); nothing submitted[/red] (--skip-invalid)")
        raise typer.Exit(2)
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


def status(
    submission_id: Annotated[
        str | None, typer.Argument(help="A submission id; omit it for the queue depths.")
    ] = None,
) -> None:
    """Status, scores and tier outcomes of one submission (JSON); with no id, queue depths."""
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
    from evalq.workers.depths import queue_depths

    require_broker("queue depths")
    for queue, depth in queue_depths(Client().app).items():
        console.print(f"{queue:<12} {depth:>8} waiting", highlight=False)


def task_put(file: Path) -> None:
    """Create or replace the task(s) in FILE (a JSON object or list)."""
    client = Client()
    try:
        tasks = read_tasks(file)
        for task in tasks:
            client.put_task(task)
    except EvalqError as error:
        fail(error)
    console.print(f"stored {len(tasks)} task(s)")
