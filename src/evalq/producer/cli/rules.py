"""A task's trace rule from the command line: `evalq rule set|show|remove|backfill`."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer

from evalq.core.errors import EvalqError, InvalidInput
from evalq.producer.cli.output import console, fail

if TYPE_CHECKING:  # pydantic models: loaded by the command that uses them, not by --help
    from evalq.core.trace_rules import BackfillRequest

rule_app = typer.Typer(
    help="Online evaluation: which streamed traces (naming no task) a task takes.",
    no_args_is_help=True,
)
TaskId = Annotated[str, typer.Argument(help="The task's id.")]


@rule_app.command("set")
def set_rule(
    task_id: TaskId,
    service_name: Annotated[
        str | None, typer.Option("--service", help="The resource's service.name equals this.")
    ] = None,
    span_name: Annotated[
        list[str] | None, typer.Option("--span-name", help="Some span has this name (repeat).")
    ] = None,
    attribute: Annotated[
        list[str] | None,
        typer.Option(
            "--attr",
            help="KEY=VALUE: a span or resource attribute equals VALUE (read as JSON when it "
            "is a number, true or false; repeat).",
        ),
    ] = None,
    sample: Annotated[
        float, typer.Option(help="Share of matching traces taken (0..1), from the trace id.")
    ] = 1.0,
) -> None:
    """Create or replace the task's trace rule."""
    from evalq.service.client import Client

    try:
        attributes = dict(_pair(item) for item in attribute or [])
        rule: dict[str, Any] = {
            "service_name": service_name,
            "span_names": span_name or [],
            "attributes": attributes,
            "sample_rate": sample,
        }
        stored = Client().put_trace_rule(task_id, rule)
    except EvalqError as error:
        fail(error)
    _say(f"task {task_id} takes traces by {stored.rule.model_dump_json()}")


@rule_app.command("show")
def show(task_id: TaskId) -> None:
    """Print the task's trace rule as JSON."""
    from evalq.service.client import Client

    try:
        found = Client().trace_rule(task_id)
    except EvalqError as error:
        fail(error)
    _say(found.model_dump_json(indent=2))


@rule_app.command("remove")
def remove(task_id: TaskId) -> None:
    """Remove the task's trace rule."""
    from evalq.service.client import Client

    try:
        Client().remove_trace_rule(task_id)
    except EvalqError as error:
        fail(error)
    _say(f"task {task_id} has no trace rule now")


@rule_app.command("backfill")
def backfill(
    task_id: TaskId,
    since: Annotated[str, typer.Option(help="ISO 8601: the traces that started at or after.")],
    until: Annotated[str, typer.Option(help="ISO 8601: ... and before.")],
) -> None:
    """Apply the task's rule to the stored traces no task took, of a time range."""
    from evalq.service.client import Client

    try:
        window = _window(_moment("since", since), _moment("until", until))
        done = Client().backfill_traces(task_id, since=window.since, until=window.until)
    except EvalqError as error:
        fail(error)
    _say(f"{len(done.taken)} of {done.examined} stored traces taken by task {task_id}")
    for submission_id in done.taken:
        _say(submission_id)


def _pair(item: str) -> tuple[str, Any]:
    key, sep, raw = item.partition("=")
    if not sep or not key:
        raise InvalidInput([("--attr", f"{item!r} is not KEY=VALUE")])
    try:  # a number or true / false; anything else (deep JSON too) is the text as typed
        from evalq.core.storable import json_text  # pydantic-core: not loaded by --help

        value = json_text(raw, where="--attr")
    except InvalidInput:
        value = raw
    return key, value if isinstance(value, bool | int | float) else raw


def _moment(name: str, text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidInput([(f"--{name}", f"{text!r} is not an ISO 8601 time")]) from None
    if moment.tzinfo is None:
        raise InvalidInput([(f"--{name}", "give a UTC offset (e.g. 2026-11-24T10:00:00+00:00)")])
    return moment


def _window(since: datetime, until: datetime) -> BackfillRequest:
    """The range checked by the rule every door shares, its problems named as the options."""
    from evalq.core.trace_rules import parse_backfill

    try:
        return parse_backfill({"since": since, "until": until})
    except InvalidInput as error:
        raise InvalidInput([(f"--{field}", rule) for field, rule in error.problems]) from None


def _say(text: str) -> None:
    console.print(text, markup=False, highlight=False, soft_wrap=True)
