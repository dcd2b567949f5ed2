"""Monitors from the command line: `evalq monitor set|list|remove` (docs/monitors.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from evalq.core.errors import EvalqError
from evalq.producer.cli.output import console, fail

if TYPE_CHECKING:
    from evalq.core.monitors import Monitor

monitor_app = typer.Typer(
    help="Alert when a task's scores drop: a windowed statistic against two thresholds.",
    no_args_is_help=True,
)
Name = Annotated[str, typer.Argument(help="The monitor's name (a-z, 0-9, _ . -).")]


@monitor_app.command("set")
def set_monitor(
    name: Name,
    tasks: Annotated[str, typer.Option(help="A task id or a glob (arena-*).")],
    alert: Annotated[float, typer.Option(help="Below this: alert.")],
    warning: Annotated[float | None, typer.Option(help="Below this: warning.")] = None,
    statistic: Annotated[str, typer.Option(help="mean, pass_rate or quantile.")] = "mean",
    quantile: Annotated[float | None, typer.Option(help="With quantile: in (0, 1).")] = None,
    pass_at: Annotated[
        float | None, typer.Option(help="pass_rate, not a suite: a run passes at this value.")
    ] = None,
    last_runs: Annotated[int | None, typer.Option(help="Window: the last N runs (20).")] = None,
    last_hours: Annotated[float | None, typer.Option(help="Window: the last T hours.")] = None,
    min_n: Annotated[int, typer.Option(help="Fewer runs in the window: no data.")] = 5,
    by: Annotated[str | None, typer.Option(help="model, tool, variant or metadata.KEY.")] = None,
    group: Annotated[str | None, typer.Option(help="The group's value (with --by).")] = None,
    renotify_minutes: Annotated[
        float | None, typer.Option(help="Alert again after this long (default: once).")
    ] = None,
) -> None:
    """Create or replace a monitor and check it at once; prints each task's state."""
    from evalq.service.client import Client

    given: dict[str, Any] = {
        "tasks": tasks,
        "alert": alert,
        "warning": warning,
        "statistic": statistic,
        "quantile": quantile,
        "pass_at": pass_at,
        "last_runs": last_runs,
        "last_hours": last_hours,
        "min_n": min_n,
        "by": by,
        "group": group,
        "renotify_minutes": renotify_minutes,
    }
    try:
        found = Client().set_monitor(name, {k: v for k, v in given.items() if v is not None})
    except EvalqError as error:
        fail(error)
    _print([found])


@monitor_app.command("list")
def list_monitors() -> None:
    """List every monitor and each watched task's state."""
    from evalq.service.client import Client

    try:
        found = Client().monitors()
    except EvalqError as error:
        fail(error)
    if not found:
        console.print("no monitors", markup=False, highlight=False)
        return
    _print(found)


@monitor_app.command("remove")
def remove(name: Name) -> None:
    """Remove a monitor and its states."""
    from evalq.service.client import Client

    try:
        Client().remove_monitor(name)
    except EvalqError as error:
        fail(error)
    console.print(f"removed monitor {name}", markup=False, highlight=False)


def _print(found: list[Monitor]) -> None:
    table = Table(title="monitors")
    for column in ("monitor", "watches", "task", "state", "value", "n"):
        table.add_column(column)
    for monitor in found:
        d = monitor.definition
        watches = f"{d.statistic} of {d.tasks}, {monitor.window}; alert < {d.alert:g}"
        watches += "" if d.warning is None else f", warning < {d.warning:g}"
        if not monitor.states:
            table.add_row(escape(monitor.name), escape(watches), "-", "no task", "-", "-")
        for state in monitor.states:
            value = "-" if state.value is None else f"{state.value:.4g}"
            cells = (monitor.name, watches, state.task_id, state.state, value, str(state.n))
            table.add_row(*map(escape, cells))
    console.print(table)
