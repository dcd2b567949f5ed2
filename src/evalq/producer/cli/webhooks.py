"""A task's webhooks from the command line: `evalq webhook add|list|remove|deliveries`."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from evalq.core.errors import EvalqError
from evalq.producer.cli.output import console, fail

webhook_app = typer.Typer(
    help="Receivers told when a task's evaluations end (signed per Standard Webhooks).",
    no_args_is_help=True,
)
TaskId = Annotated[str, typer.Argument(help="The task's id.")]
WebhookId = Annotated[str, typer.Argument(help="The webhook's id (wh_...).")]


@webhook_app.command("add")
def add(
    task_id: TaskId,
    url: Annotated[str, typer.Argument(help="The receiver: an http:// or https:// URL.")],
    description: Annotated[str | None, typer.Option(help="Who owns the receiver.")] = None,
) -> None:
    """Register a webhook; prints its signing secret, which is never shown again."""
    from evalq.service.client import Client

    try:
        created = Client().add_webhook(task_id, {"url": url, "description": description})
    except EvalqError as error:
        fail(error)
    _say(f"added webhook {created.id} to task {task_id}: {created.url}")
    _say(f"signing secret (shown once, keep it now): {created.secret}")


@webhook_app.command("list")
def list_webhooks(task_id: TaskId) -> None:
    """List the task's webhooks (never their secrets)."""
    from evalq.service.client import Client

    try:
        found = Client().webhooks(task_id)
    except EvalqError as error:
        fail(error)
    if not found:
        _say(f"task {task_id} has no webhooks")
        return
    table = Table(title=f"webhooks of {escape(task_id)}")
    for column in ("id", "url", "description", "created"):
        table.add_column(column)
    for hook in found:
        cells = (hook.id, hook.url, hook.description or "", hook.created_at.isoformat())
        table.add_row(*map(escape, cells))
    console.print(table)


@webhook_app.command("remove")
def remove(task_id: TaskId, webhook_id: WebhookId) -> None:
    """Remove a webhook, its secret and its delivery records."""
    from evalq.service.client import Client

    try:
        Client().remove_webhook(task_id, webhook_id)
    except EvalqError as error:
        fail(error)
    _say(f"removed webhook {webhook_id} of task {task_id}")


@webhook_app.command("deliveries")
def deliveries(
    task_id: TaskId,
    webhook_id: WebhookId,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="Newest first, at most.")] = 20,
) -> None:
    """List the webhook's deliveries: status, attempts, last status code or error."""
    from evalq.service.client import Client

    try:
        found = Client().webhook_deliveries(task_id, webhook_id, limit=limit)
    except EvalqError as error:
        fail(error)
    if not found:
        _say(f"webhook {webhook_id} has no deliveries yet")
        return
    table = Table(title=f"deliveries of {escape(webhook_id)}")
    for column in ("webhook-id", "event", "submission", "status", "attempts", "last", "updated"):
        table.add_column(column)
    for item in found:
        last = item.last_error or (str(item.last_status_code) if item.last_status_code else "")
        cells = (
            item.id,
            item.event,
            item.submission_id or "",
            item.status,
            str(item.attempts),
            last,
            item.updated_at.isoformat(),
        )
        table.add_row(*map(escape, cells))
    console.print(table)


def _say(text: str) -> None:
    """Print a message that may carry ids and URLs as it is (no rich markup)."""
    console.print(text, markup=False, highlight=False, soft_wrap=True)
