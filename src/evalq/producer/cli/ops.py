"""The operator commands: `evalq worker`, `beat`, `flower`, `recover` and `db upgrade`."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Annotated

import typer

from evalq.core.errors import EvalqError
from evalq.producer.cli.output import (
    console,
    fail,
    fail_with,
    require_broker,
    wait_with_progress,
    working,
)


def worker(
    queues: Annotated[str, typer.Option(help="Comma-separated queues.")] = (
        "evalq.text,evalq.judge,evalq.graph,evalq.merge,evalq.webhooks"
    ),
    pool: Annotated[str | None, typer.Option(help="prefork / threads / solo.")] = None,
    concurrency: Annotated[int | None, typer.Option(help="Processes or threads.")] = None,
    loglevel: Annotated[str, typer.Option()] = "INFO",
    include: Annotated[
        list[str] | None, typer.Option(help="Extra modules to import (signal handlers, tasks).")
    ] = None,
    hostname: Annotated[
        str | None,
        typer.Option(help="Node name, e.g. text1@%h [default: from the queues, e.g. text@%h]."),
    ] = None,
) -> None:
    """Start a worker on the configured broker (EVALQ_BROKER_URL)."""
    from evalq.core.settings import get_settings
    from evalq.workers.bootstrap import run_worker, worker_extra_problem

    if not get_settings().broker_url:
        console.print(
            "[red]error:[/red] EVALQ_BROKER_URL is not set (e.g. redis://127.0.0.1:6379/0)"
        )
        raise typer.Exit(2)
    queue_list = queues.split(",")
    problem = worker_extra_problem(queue_list)
    if problem:
        fail_with(problem)
    run_worker(
        queue_list,
        pool=pool,
        concurrency=concurrency,
        loglevel=loglevel,
        include=include or [],
        hostname=hostname,
    )


def recover(
    older_than: Annotated[
        float | None,
        typer.Option(help="Seconds without progress [default: EVALQ_STUCK_AFTER_S; 0 in-process]."),
    ] = None,
    timeout: Annotated[float, typer.Option(help="In-process: seconds to wait for them.")] = 3600,
) -> None:
    """Re-enqueue submissions stuck in queued/running (the database is the source of truth).

    With no EVALQ_BROKER_URL nothing outside this process can be evaluating them, so every
    unfinished submission is evaluated here, now.
    """
    from evalq.core.settings import get_settings
    from evalq.service.client import Client
    from evalq.tasks.recover import recover as sweep

    client = Client()
    default = 0 if client.in_process else get_settings().stuck_after_s
    seconds = older_than if older_than is not None else default
    try:
        with working("finding submissions stuck in queued or running"):
            ids = sweep(client.app, older_than=timedelta(seconds=seconds))
    except EvalqError as error:
        fail(error)
    console.print(f"re-enqueued {len(ids)} submission(s)")
    if client.in_process and ids:
        try:
            wait_with_progress(client, ids, timeout=timeout)  # starts the in-process worker
        finally:
            client.close()


def db_upgrade() -> None:
    """Apply the Alembic migrations to EVALQ_DATABASE_URL."""
    from evalq.core.settings import get_settings
    from evalq.store.db import upgrade

    upgrade(get_settings().database_url)
    console.print("database is at the latest revision")


def db_refresh(
    tasks: Annotated[
        list[str] | None, typer.Argument(help="Task ids (default: every task).")
    ] = None,
) -> None:
    """Refresh tasks as a worker does after merges: baseline, every run's standing and place
    on the board, the board's figures (after an upgrade, the first read of each task would
    build them instead)."""
    import time

    from evalq.core.settings import get_settings
    from evalq.read import served
    from evalq.store import queries
    from evalq.store.db import session_scope

    settings = get_settings()
    try:
        with session_scope(settings.database_url) as session:
            wanted = tasks or [o.task.id for o in queries.task_overviews(session)]
        for task_id in wanted:
            start = time.perf_counter()
            with session_scope(settings.database_url) as session:
                version = served.refresh_task(session, task_id=task_id, settings=settings)
            took = time.perf_counter() - start
            console.print(
                f"{task_id}: baseline v{version}, standings and board figures stored "
                f"({took:.1f} s)",
                markup=False,
                highlight=False,
            )
    except EvalqError as error:
        fail(error)


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
        fail(error)


def beat(
    schedule: Annotated[
        Path, typer.Option(help="Celery beat's schedule file (last run of each entry).")
    ] = Path("celerybeat-schedule"),
    loglevel: Annotated[str, typer.Option()] = "INFO",
) -> None:
    """Run Celery beat: the periodic recovery sweep (EVALQ_RECOVER_EVERY_S). Run exactly one."""
    from evalq.workers.bootstrap import worker_app

    require_broker("beat")
    worker_app().start(["beat", "--schedule", str(schedule), "--loglevel", loglevel])
