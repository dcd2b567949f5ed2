"""The `evalq` command line."""

from __future__ import annotations

import json
import sys
import time
from contextlib import AbstractContextManager, nullcontext
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from evalq.errors import EvalqError, InvalidInput
from evalq.producer.api.commands import api as api_command
from evalq.producer.api.commands import keys_app
from evalq.producer.client import FINAL_STATUSES, Client
from evalq.producer.files import read_jsonl, read_tasks
from evalq.settings import get_settings

app = typer.Typer(help="evalq: evaluate AI-agent runs on a job queue.", no_args_is_help=True)
db_app = typer.Typer(help="Database schema.", no_args_is_help=True)
task_app = typer.Typer(help="Task definitions.", no_args_is_help=True)
app.add_typer(db_app, name="db")
app.add_typer(task_app, name="task")
app.add_typer(keys_app, name="keys")
app.command("api")(api_command)
console = Console(width=None if sys.stdout.isatty() else 200)
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _fail(error: EvalqError) -> NoReturn:
    typer.echo(f"error: {error}", err=True)
    raise typer.Exit(2)


def wait_with_progress(client: Client, ids: list[str], *, timeout: float) -> dict[str, str]:
    """Wait for ``ids`` with a progress bar: done / degraded / failed, rate and ETA."""
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    ) as progress:
        bar = progress.add_task("evaluating", total=len(ids), detail="")
        started = time.monotonic()

        def report(statuses: dict[str, str]) -> None:
            counts = {s: list(statuses.values()).count(s) for s in FINAL_STATUSES}
            finished = sum(counts.values())
            rate = finished / max(1e-9, time.monotonic() - started)
            detail = (
                f"done {counts['done']} degraded {counts['degraded']} "
                f"failed {counts['failed']} · {rate:.1f}/s"
            )
            progress.update(bar, completed=finished, detail=detail)

        return client.wait(ids, timeout=timeout, on_progress=report)


@app.command()
def submit(
    file: Annotated[Path, typer.Argument(help="JSONL file, one submission per line.")],
    no_wait: Annotated[bool, typer.Option("--no-wait", help="Enqueue and return.")] = False,
    skip_invalid: Annotated[
        bool, typer.Option("--skip-invalid", help="Submit the valid lines, report the rest.")
    ] = False,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for the results.")] = 3600,
) -> None:
    """Submit every submission in FILE; bad lines are reported by line number."""
    good, bad = read_jsonl(file)
    for line, problems in bad:
        for field, rule in problems:
            typer.echo(f"{file}:{line}: {field}: {rule}", err=True)
    if bad and not skip_invalid:
        console.print(f"[red]{len(bad)} invalid line(s); nothing submitted[/red] (--skip-invalid)")
        raise typer.Exit(2)
    client = Client()
    try:
        results = client.submit_many(good)
    except EvalqError as error:
        _fail(error)
    created = sum(r.created for r in results)
    console.print(f"submitted {len(results)} ({created} new, {len(results) - created} existing)")
    if not no_wait and results:
        statuses = wait_with_progress(client, [r.id for r in results], timeout=timeout)
        failed = sum(s == "failed" for s in statuses.values())
        raise typer.Exit(1 if failed else 0)


@app.command()
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
        _fail(error)
    console.print_json(json.dumps(result, default=str))


def _require_broker(what: str) -> None:
    if not get_settings().broker_url:
        typer.echo(f"error: EVALQ_BROKER_URL is not set ({what} needs a real broker)", err=True)
        raise typer.Exit(2)


def print_queue_depths() -> None:
    """Print how many messages wait in each evalq queue (asked of the broker)."""
    from evalq.workers.queues import queue_depths

    _require_broker("queue depths")
    for queue, depth in queue_depths(Client().app).items():
        console.print(f"{queue:<12} {depth:>8} waiting", highlight=False)


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


@app.command("leaderboard")
def leaderboard_command(
    task_id: str,
    tool: Annotated[str | None, typer.Option(help="Only this tool.")] = None,
    model: Annotated[str | None, typer.Option(help="Only this model.")] = None,
    variant: Annotated[str | None, typer.Option(help="Only this variant (T0..Tn).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Rank a task's evaluated submissions against its current baseline."""
    from evalq.producer.leaderboard import leaderboard
    from evalq.store.db import session_scope

    try:
        with session_scope() as session:
            board = leaderboard(session, task_id=task_id, tool=tool, model=model, variant=variant)
    except EvalqError as error:
        _fail(error)
    if as_json:
        console.print_json(json.dumps(board.to_dict()))
    else:
        print_leaderboard(board)


@app.command()
def worker(
    queues: Annotated[str, typer.Option(help="Comma-separated queues.")] = (
        "evalq.text,evalq.judge,evalq.graph,evalq.merge"
    ),
    pool: Annotated[str | None, typer.Option(help="prefork / threads / solo.")] = None,
    concurrency: Annotated[int | None, typer.Option(help="Processes or threads.")] = None,
    loglevel: Annotated[str, typer.Option()] = "INFO",
    include: Annotated[
        list[str] | None, typer.Option(help="Extra modules to import (signal handlers, tasks).")
    ] = None,
    hostname: Annotated[
        str | None, typer.Option(help="Node name, e.g. text1@%h (several workers on one host).")
    ] = None,
) -> None:
    """Start a worker on the configured broker (EVALQ_BROKER_URL)."""
    from evalq.workers.bootstrap import run_worker

    if not get_settings().broker_url:
        console.print(
            "[red]error:[/red] EVALQ_BROKER_URL is not set (e.g. redis://127.0.0.1:6379/0)"
        )
        raise typer.Exit(2)
    run_worker(
        queues.split(","),
        pool=pool,
        concurrency=concurrency,
        loglevel=loglevel,
        include=include or [],
        hostname=hostname,
    )


@app.command()
def recover(
    older_than: Annotated[float | None, typer.Option(help="Seconds without progress.")] = None,
) -> None:
    """Re-enqueue submissions stuck in queued/running (the database is the source of truth)."""
    from evalq.tasks.recover import recover as sweep

    seconds = older_than if older_than is not None else get_settings().stuck_after_s
    ids = sweep(Client().app, older_than=timedelta(seconds=seconds))
    console.print(f"re-enqueued {len(ids)} submission(s)")


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Apply the Alembic migrations to EVALQ_DATABASE_URL."""
    from evalq.store.db import upgrade

    upgrade(get_settings().database_url)
    console.print("database is at the latest revision")


@task_app.command("put")
def task_put(file: Path) -> None:
    """Create or replace the task(s) in FILE (a JSON object or list)."""
    client = Client()
    try:
        tasks = read_tasks(file)
        for task in tasks:
            client.put_task(task)
    except EvalqError as error:
        _fail(error)
    console.print(f"stored {len(tasks)} task(s)")


@app.command()
def demo(
    examples: Annotated[Path, typer.Option(help="Directory with tasks.json and *.jsonl.")] = (
        EXAMPLES
    ),
    timeout: Annotated[float, typer.Option(help="Seconds to wait.")] = 1800,
) -> None:
    """Evaluate the bundled examples end to end and print the leaderboards.

    With no EVALQ_BROKER_URL the whole pipeline runs in this process (an embedded worker over
    kombu's in-memory transport, the SQLite store); with one, real workers do the work.
    """
    settings = get_settings()
    client = Client(settings)
    context: AbstractContextManager[Any] = nullcontext()
    if not settings.broker_url:
        from evalq.workers.bootstrap import worker_app
        from evalq.workers.embedded import embedded_worker

        client.app = worker_app(settings)
        context = embedded_worker(client.app)
    try:
        tasks = read_tasks(examples / "tasks.json")
        submissions: list[dict[str, Any]] = []
        for path in sorted(examples.glob("*.jsonl")):
            good, bad = read_jsonl(path)
            if bad:
                raise InvalidInput([(f"{path.name}:{line}", str(p)) for line, p in bad])
            submissions += good
    except EvalqError as error:
        _fail(error)
    with context:
        for task in tasks:
            client.put_task(task)
        results = client.submit_many(submissions)
        console.print(f"{len(results)} submissions on {len(tasks)} tasks")
        wait_with_progress(client, [r.id for r in results], timeout=timeout)
        from evalq.tasks.merge import refresh_baseline

        for task in tasks:  # settle the baselines before ranking
            refresh_baseline(task.id)
    for task in tasks:
        leaderboard_command(task.id)


@app.command()
def flower(
    address: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP port.")] = 5555,
    purge_offline_after: Annotated[
        int | None, typer.Option(help="Forget workers offline this many seconds.")
    ] = None,
) -> None:
    """Start Flower on EVALQ_BROKER_URL, behind basic auth (EVALQ_FLOWER_USER/_PASSWORD)."""
    from evalq.workers.flower import run_flower

    try:
        run_flower(address=address, port=port, purge_offline_after_s=purge_offline_after)
    except EvalqError as error:
        _fail(error)


@app.command()
def beat(
    schedule: Annotated[
        Path, typer.Option(help="Celery beat's schedule file (last run of each entry).")
    ] = Path("celerybeat-schedule"),
    loglevel: Annotated[str, typer.Option()] = "INFO",
) -> None:
    """Run Celery beat: the periodic recovery sweep (EVALQ_RECOVER_EVERY_S). Run exactly one."""
    from evalq.workers.bootstrap import worker_app

    _require_broker("beat")
    worker_app().start(["beat", "--schedule", str(schedule), "--loglevel", loglevel])


@app.command()
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
    from evalq.producer.report import render, report_data
    from evalq.store.db import session_scope

    try:
        with session_scope() as session:
            data = report_data(session, task_id=task_id)
        text = render(data, fmt)
    except EvalqError as error:
        _fail(error)
    output.write_text(text, encoding="utf-8")
    console.print(f"wrote {output} ({len(data.entries)} submissions)", highlight=False)


def main() -> None:
    """Entry point of the `evalq` script."""
    try:
        app()
    except InvalidInput as error:  # pragma: no cover - typer exits first in practice
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
