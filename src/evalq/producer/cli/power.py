"""`evalq plan TASK`: how many runs per variant or agent a comparison needs (``--detect D``),
and the runs a variant registers before they happen (``--variant T1 --runs N --deadline
WHEN``: one ticket per run, docs/scoring.md "Pre-registered runs"; ``--registered`` lists
the task's plans)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from evalq.core.errors import EvalqError
from evalq.producer.cli.output import console, fail

if TYPE_CHECKING:
    from evalq.core.tickets import RegisteredPlan


def plan_command(
    task_id: str,
    detect: Annotated[
        float | None,
        typer.Option(
            help="The difference in the task's ranking score to detect; default: the "
            "profile's power.detect, else a tenth of the score's scale."
        ),
    ] = None,
    variant: Annotated[
        str | None, typer.Option(help="Register runs of this variant (T0..T999): with --runs.")
    ] = None,
    runs: Annotated[
        int | None, typer.Option(help="Register this many runs: one ticket each.")
    ] = None,
    deadline: Annotated[
        str | None,
        typer.Option(
            help="When the registered runs are due (2026-12-01T00:00Z): a ticket with "
            "no run by then counts as a failure."
        ),
    ] = None,
    seed: Annotated[
        list[int] | None,
        typer.Option(help="A seed per registered run, in order (repeat: as many as --runs)."),
    ] = None,
    registered: Annotated[
        bool, typer.Option("--registered", help="List the task's registered plans and tickets.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Runs per variant or agent the task's observed noise needs for the paired test to
    detect --detect with 80% power at the task's alpha (docs/power.md); with --variant,
    --runs and --deadline, register those runs before they happen and print their tickets
    (send each run with its ticket: only ticketed runs then count for the variant)."""
    if variant is not None or runs is not None or deadline is not None or seed:
        given: dict[str, Any] = {"variant": variant, "runs": runs, "deadline": deadline}
        _register(task_id, given | ({"seeds": seed} if seed else {}), as_json=as_json)
        return
    if registered:
        _registered(task_id, as_json=as_json)
        return
    from evalq.read.power import task_plan
    from evalq.store.db import session_scope

    try:
        with session_scope() as session:
            found = task_plan(session, task_id=task_id, detect=detect)
    except EvalqError as error:
        fail(error)
    if as_json:
        sys.stdout.write(found.model_dump_json(indent=2) + "\n")
        return
    runs_needed = "-" if found.runs is None else str(found.runs)
    console.print(f"{found.task_id}: {runs_needed} runs per {found.groups_by}", highlight=False)
    console.print(found.note, highlight=False)


def _register(task_id: str, given: dict[str, Any], *, as_json: bool) -> None:
    """Register the plan ``given`` (its fields left out when not given: the plan's own rules
    name what is missing) and print it with its tickets."""
    from evalq.service.client import Client

    try:
        found = Client().register_plan(task_id, {k: v for k, v in given.items() if v is not None})
    except EvalqError as error:
        fail(error)
    if as_json:
        sys.stdout.write(found.model_dump_json(indent=2) + "\n")
        return
    _print_plan(found)


def _registered(task_id: str, *, as_json: bool) -> None:
    from evalq.service.client import Client

    try:
        found = Client().registered_plans(task_id, with_tickets=True)
    except EvalqError as error:
        fail(error)
    if as_json:
        sys.stdout.write(found.model_dump_json(indent=2) + "\n")
        return
    if not found.plans:
        console.print(f"{task_id}: no registered plans", highlight=False)
    for plan in found.plans:
        _print_plan(plan)


def _print_plan(plan: RegisteredPlan) -> None:
    console.print(
        f"{plan.task_id} {plan.variant}: plan {plan.id}, {plan.runs} runs due by "
        f"{plan.deadline.isoformat()} ({plan.used} used, {plan.unused} unused, "
        f"{plan.expired} expired)",
        highlight=False,
        markup=False,
    )
    for ticket in plan.tickets or []:
        seed = "" if ticket.seed is None else f"\tseed {ticket.seed}"
        used = "" if ticket.used_by is None else f"\tused by {ticket.used_by}"
        console.print(f"{ticket.id}{seed}{used}", highlight=False, markup=False, soft_wrap=True)
