"""`evalq import otlp FILE`: exported OpenTelemetry traces in, one submission per trace."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalq.core.errors import EvalqError, InvalidInput
from evalq.producer.cli.output import console, fail, fail_with, wait_with_progress
from evalq.producer.cli.submit import exit_on_file_problems

import_app = typer.Typer(help="Bring agent runs in from other formats.", no_args_is_help=True)


@import_app.command("otlp")
def import_otlp(
    file: Annotated[
        Path,
        typer.Argument(
            help="OTLP trace data: OTLP/JSON (one request, or one per line as the "
            "Collector's file exporter writes) or one protobuf ExportTraceServiceRequest."
        ),
    ],
    task_id: Annotated[
        str | None, typer.Option("--task-id", help="For traces without evalq.task_id.")
    ] = None,
    tool: Annotated[str | None, typer.Option(help="For traces without evalq.tool.")] = None,
    model: Annotated[str | None, typer.Option(help="For traces without evalq.model.")] = None,
    variant: Annotated[str | None, typer.Option(help="For traces without evalq.variant.")] = None,
    no_wait: Annotated[bool, typer.Option("--no-wait", help="Enqueue and return.")] = False,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for the results.")] = 3600,
) -> None:
    """Submit each trace in FILE as one submission (docs/traces.md has the mapping).

    A trace that cannot be mapped is reported as FILE: span ID (NAME).ATTRIBUTE: rule, and
    nothing is submitted. With no EVALQ_BROKER_URL the runs are evaluated in this process, as
    `evalq submit` does.
    """
    from evalq.service.client import Client

    client = Client()
    if client.in_process and no_wait:
        fail_with("--no-wait needs EVALQ_BROKER_URL (with no broker, evaluation runs here)")
    try:
        raw = file.read_bytes()
    except OSError as error:
        fail_with(f"{file}: cannot read: {error.strerror}")
    try:
        results = client.import_otlp(raw, task_id=task_id, tool=tool, model=model, variant=variant)
    except InvalidInput as error:
        exit_on_file_problems(file, error.problems)
    except EvalqError as error:
        fail(error)
    created = sum(r.created for r in results)
    console.print(
        f"imported {len(results)} trace(s) ({created} new, {len(results) - created} existing): "
        + ", ".join(r.id for r in results),
        highlight=False,
    )
    if not no_wait:
        try:
            statuses = wait_with_progress(client, [r.id for r in results], timeout=timeout)
        finally:
            client.close()
        raise typer.Exit(1 if any(s == "failed" for s in statuses.values()) else 0)
