"""How the `evalq` commands talk to the user: the console, error exits, the progress bar."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn

import typer
from rich.console import Console
from typer import _click as click  # the click typer vendors (its errors are typer's)
from typer.core import TyperGroup

from evalq.core.errors import BrokerUnavailable, EvalqError, InvalidInput
from evalq.service.submitted import FINAL_STATUSES

if TYPE_CHECKING:
    from evalq.service.client import Client

console = Console(width=None if sys.stdout.isatty() else 200)
progress_console = Console(stderr=True)
"""Where progress is drawn: stderr, so what a command prints on stdout (JSON, tables) stays
whole; drawn only when stderr is a terminal."""


@contextmanager
def working(description: str) -> Iterator[None]:
    """A spinner with ``description`` and the time elapsed while a step that can take seconds
    runs, removed when it ends; nothing at all when stderr is not a terminal (scripts, CI)."""
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=progress_console,
        transient=True,
        disable=not progress_console.is_terminal,
    ) as progress:
        progress.add_task(description, total=None)
        yield


def fail(error: EvalqError, *, outcome: str | None = None) -> NoReturn:
    """Print ``error`` on stderr and exit with status 2.

    An `InvalidInput` of several problems prints one ``error: field: rule`` line each (every
    bad row of a file, each on its line, in the file's order), then ``outcome`` when given
    (``"nothing stored"``), so a long list still ends by saying what happened.
    """
    if isinstance(error, InvalidInput) and len(error.problems) > 1:
        for field, rule in error.problems:
            typer.echo(f"error: {field}: {rule}", err=True)
        if error.more:
            typer.echo(f"error: and {error.more} more problems", err=True)
        fail_with(f"{error.total} problems; {outcome}" if outcome else f"{error.total} problems")
    fail_with(f"{error}; {outcome}" if outcome else str(error))


def fail_with(message: str) -> NoReturn:
    """Print ``error: message`` on stderr and exit with status 2."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


class OneErrorStyle(TyperGroup):
    """The root command: a usage error (a missing argument, an unknown option or command, a
    value click refuses) is printed as every other error is, ``error: message`` on one line of
    stderr with the command's ``--help`` named, exit 2; not typer's boxed "Error" panel.

    Caught where click raises them: parsing the root's own arguments (`make_context`) and
    everything below it (`invoke`: the subcommands' parsing and bodies). A group called without
    a command still prints its help (`NoArgsIsHelpError` passes through)."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except typer.TyperException as error:
            usage_failed(error)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except typer.TyperException as error:
            usage_failed(error)


def usage_failed(error: typer.TyperException) -> NoReturn:
    """Print a usage error as ``error: ...`` and exit with its status (2); a group's
    `NoArgsIsHelpError` (its help, printed already) is raised on for typer to end."""
    if type(error).__name__ == "NoArgsIsHelpError":
        raise error
    typer.echo(f"error: {usage_error(error)}", err=True)
    raise typer.Exit(getattr(error, "exit_code", 2))


def usage_error(error: typer.TyperException) -> str:
    """A click error as one line: its message, then where the command's help is."""
    message = " ".join(error.format_message().split())
    context = getattr(error, "ctx", None)
    if context is None:
        return message
    return f"{message} (usage: {context.command_path} --help)"


SETTINGS_INVALID = 3
"""Exit status when an ``EVALQ_*`` variable breaks its rule (nothing else can run)."""


def one_line(error: Exception) -> tuple[str, int]:
    """What to tell the user about an error no command handled, and the exit status.

    A service that is down is named with the setting that points at it; anything unexpected is
    named by its type, with a hint to run again with --debug.
    """
    from kombu.exceptions import OperationalError as BrokerError
    from pydantic import ValidationError
    from redis.exceptions import ConnectionError as RedisDown
    from sqlalchemy.exc import OperationalError as DatabaseDown

    if isinstance(error, ValidationError) and error.title == "Settings":
        rules = "; ".join(
            f"EVALQ_{'.'.join(map(str, item['loc'])).upper()}: {item['msg']}"
            for item in error.errors(include_url=False, include_input=False)
        )
        return f"invalid settings: {rules}", SETTINGS_INVALID
    reason = " ".join(str(error).split())[:300]
    if isinstance(error, DatabaseDown):
        cause = " ".join(str(error.orig).split())[:200]
        return (f"the database is unavailable ({cause}); start it or check EVALQ_DATABASE_URL", 2)
    if isinstance(error, BrokerError | RedisDown):
        reason = f"the broker is unavailable ({reason})"
    if isinstance(error, BrokerUnavailable | BrokerError | RedisDown):
        return (f"{reason}; start the broker or check EVALQ_BROKER_URL", 2)
    if isinstance(error, EvalqError):
        return reason, 2
    if isinstance(error, TimeoutError):
        hint = "they stay stored: `evalq status ID` shows one, `evalq recover` runs them again"
        return f"{reason}; {hint}", 1
    return f"unexpected {type(error).__name__}: {reason} (run with --debug for the traceback)", 1


def require_broker(what: str) -> None:
    """Exit with status 2 unless EVALQ_BROKER_URL is set; ``what`` names the command's need."""
    from evalq.core.settings import get_settings

    if not get_settings().broker_url:
        typer.echo(f"error: EVALQ_BROKER_URL is not set ({what} needs a real broker)", err=True)
        raise typer.Exit(2)


def wait_with_progress(client: Client, ids: list[str], *, timeout: float) -> dict[str, str]:
    """Wait for ``ids`` with a progress bar: done / degraded / failed, rate and ETA."""
    from rich.progress import (
        BarColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=False,
        disable=not console.is_terminal,  # quiet in scripts and CI logs
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
