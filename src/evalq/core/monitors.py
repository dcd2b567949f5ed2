"""Monitors on the wire: a windowed statistic of a task's scores against two thresholds.

A monitor watches every task its ``tasks`` names (an id or a glob), optionally one group of
runs (``by`` and ``group``, as `evalq compare` groups them). Over a window (the last N runs,
or the runs of the last T hours) it computes a statistic of the task kind's ranking value (the
board's: the Arena overall, a composite, a suite's final score): the mean, the pass rate, or a
quantile. Below ``alert`` the task is in ``alert``, below ``warning`` in ``warning``, else
``ok``; with fewer than ``min_n`` runs in the window it has ``no data``. A change of state is a
signed webhook event to the task's webhooks: ``monitor.alert`` on entering warning or alert,
``monitor.resolved`` on returning to ok from one (docs/monitors.md). One check sends each
webhook of a task one event carrying every monitor whose state changed (`MonitorEvents`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalq.core.errors import InvalidInput
from evalq.core.metadata import KEY_RULE, MAX_KEY_CHARS, valid_key
from evalq.core.schemas import problems_of

Statistic = Literal["mean", "pass_rate", "quantile"]
MonitorRule = Literal["threshold", "anytime"]
MonitorState = Literal["ok", "warning", "alert", "no data"]
MonitorEventType = Literal["monitor.alert", "monitor.resolved"]
MONITOR_STATES: tuple[MonitorState, ...] = get_args(MonitorState)
EVENT_TYPES: tuple[MonitorEventType, ...] = get_args(MonitorEventType)
NAME_PATTERN = r"^[a-z0-9][a-z0-9_.-]{0,62}$"
NAME_RULE = "1-63 of a-z, 0-9, '_', '.', '-', starting with a letter or digit"
GROUP_FIELDS = ("model", "tool", "variant")
BY_RULE = "one of model, tool, variant, or metadata.KEY"
MAX_RUNS = 10_000
MAX_HOURS = 24 * 366
DEFAULT_RUNS = 20
PAGE_DEFAULT = 100
PAGE_MAX = 500
"""Monitors one page of GET /v1/monitors lists: by default, and at most."""


class MonitorRequest(BaseModel):
    """The body of ``PUT /v1/monitors/{name}``: what to watch and when to speak (served back
    in `Monitor` as it was sent)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tasks: str = Field(
        min_length=1,
        max_length=200,
        description="A task id or a glob (arena-*): every task it names, now or later.",
    )
    by: str | None = Field(
        default=None,
        max_length=len("metadata.") + MAX_KEY_CHARS,
        description=f"Watch one group of runs: {BY_RULE}; with ``group``.",
    )
    group: str | None = Field(
        default=None, min_length=1, max_length=1000, description="The group's value."
    )
    statistic: Statistic = Field(
        default="mean",
        description="mean, pass_rate (a suite: its gate passed; else value >= pass_at), or "
        "quantile (``quantile`` in (0, 1)) of the kind's ranking value over the window.",
    )
    quantile: float | None = Field(default=None, gt=0, lt=1)
    pass_at: float | None = Field(
        default=None, description="pass_rate of a task not a suite: a run passes at this value."
    )
    last_runs: int | None = Field(
        default=None,
        ge=1,
        le=MAX_RUNS,
        description=f"The window: the last N runs ({DEFAULT_RUNS}).",
    )
    last_hours: float | None = Field(
        default=None, gt=0, le=MAX_HOURS, description="The window: the runs of the last T hours."
    )
    warning: float | None = Field(
        default=None, description="Below this, warning (at or above ``alert``)."
    )
    alert: float = Field(description="Below this, alert.")
    min_n: int = Field(
        default=5, ge=1, le=MAX_RUNS, description="Fewer runs in the window: no data."
    )
    rule: MonitorRule = Field(
        default="threshold",
        description="threshold: the statistic below alert is an alert. anytime: only when the "
        "window's mean is below alert beyond its noise at a level spent over the stream, so "
        "the chance of any false alert stays at most ``level`` however often it is checked "
        "(mean and pass_rate; docs/monitors.md).",
        exclude_if=lambda value: value == "threshold",  # earlier monitors read as before
    )
    level: float | None = Field(
        default=None,
        gt=0,
        lt=0.5,
        description="anytime: the false-alert level (0.05 when omitted).",
        exclude_if=lambda value: value is None,
    )
    renotify_minutes: float | None = Field(
        default=None,
        ge=1,
        le=7 * 24 * 60,
        description="Send monitor.alert again after this long in warning or alert (None: once).",
    )

    @property
    def runs(self) -> int | None:
        """The window's number of runs (None: a window of hours)."""
        return None if self.last_hours is not None else (self.last_runs or DEFAULT_RUNS)

    def window(self) -> str:
        """The window in words."""
        return f"last {self.runs} runs" if self.runs else f"last {self.last_hours:g} hours"


def _valid_by(by: str) -> bool:
    if by in GROUP_FIELDS:
        return True
    return by.startswith("metadata.") and valid_key(by.removeprefix("metadata."))


def _rules(m: MonitorRequest) -> list[tuple[str, str]]:
    """What no single field says: the fields that go together or exclude each other."""
    problems = []
    if (m.by is None) != (m.group is None):
        problems.append(("group", "by and group go together"))
    if m.by is not None and not _valid_by(m.by):
        problems.append(("by", BY_RULE if not m.by.startswith("metadata.") else KEY_RULE))
    if m.statistic == "quantile" and m.quantile is None:
        problems.append(("quantile", "required with statistic quantile, in (0, 1)"))
    if m.statistic != "quantile" and m.quantile is not None:
        problems.append(("quantile", "only with statistic quantile"))
    if m.last_runs is not None and m.last_hours is not None:
        problems.append(("last_hours", "one window: last_runs or last_hours, not both"))
    if m.warning is not None and m.warning < m.alert:
        problems.append(("warning", "at or above alert (a drop warns before it alerts)"))
    if m.rule == "anytime" and m.statistic == "quantile":
        problems.append(("rule", "anytime judges a mean: statistic mean or pass_rate"))
    if m.level is not None and m.rule != "anytime":
        problems.append(("level", "only with rule anytime"))
    if m.runs is not None and m.min_n > m.runs:
        problems.append(("min_n", "at most the window's runs"))
    return problems


def parse_monitor(name: str, data: Any) -> MonitorRequest:
    """A valid monitor named ``name``, or `InvalidInput` naming each bad field and its rule
    (nothing is stored)."""
    problems = [] if re.fullmatch(NAME_PATTERN, name) else [("name", NAME_RULE)]
    try:
        request = data if isinstance(data, MonitorRequest) else MonitorRequest.model_validate(data)
    except ValidationError as error:
        raise InvalidInput(problems + problems_of(error)) from None
    problems += _rules(request)
    if problems:
        raise InvalidInput(problems)
    return request


class TaskMonitorState(BaseModel):
    """One task's state under a monitor, as the last evaluation left it."""

    task_id: str
    state: MonitorState
    value: float | None = Field(description="The statistic over the window; None: no data.")
    n: int = Field(description="Runs in the window.")
    evaluated_at: datetime
    changed_at: datetime = Field(description="When the task entered this state.")
    notified: MonitorEventType | None = Field(description="The last event sent, if any.")
    notified_at: datetime | None
    judge_break: str | None = Field(
        default=None,
        description='"judge changed: ..." when the task\'s scores mix two or more judges, so '
        "the window may hold a break (docs/judge.md); absent otherwise.",
        exclude_if=lambda value: value is None,
    )


class Monitor(BaseModel):
    """A monitor, its definition and each watched task's state (none before its first run)."""

    name: str
    definition: MonitorRequest
    window: str = Field(description="The window in words.")
    created_at: datetime
    created_by: str | None
    states: list[TaskMonitorState]


class MonitorList(BaseModel):
    """A page of monitors, by name."""

    monitors: list[Monitor]
    next: str | None = Field(
        default=None,
        description="Pass as ``after`` for the next page; None: this page is the last.",
    )


def every_monitor(page_after: Callable[[str | None], MonitorList]) -> list[Monitor]:
    """Every monitor, by name, read a page at a time with ``page_after(after)`` (the sync
    clients' `monitors`; the async client reads the same way with await)."""
    found: list[Monitor] = []
    after: str | None = None
    while True:
        page = page_after(after)
        found += page.monitors
        if page.next is None:
            return found
        after = page.next


def store_cap_rule(cap: int) -> str:
    """Why one more monitor is refused: the store holds ``cap`` already."""
    return f"a store holds at most {cap} monitors (EVALQ_MONITOR_MAX); remove one first"


def task_cap_rule(task_id: str, cap: int) -> str:
    """Why a monitor that would watch ``task_id`` is refused: ``cap`` others watch it."""
    return (
        f"task {task_id!r} is watched by {cap} monitors already, the most one task may have "
        "(EVALQ_MONITOR_MAX_PER_TASK)"
    )


class MonitorRemoved(BaseModel):
    """The answer to removing a monitor."""

    name: str
    removed: Literal[True] = True


class MonitorEvent(BaseModel):
    """One monitor's change in a `MonitorEvents`: which state, the figures behind it."""

    event: MonitorEventType = Field(
        description="monitor.alert (entered warning or alert, or still in one: ``renotify``) "
        "or monitor.resolved (back to ok)."
    )
    monitor: str
    task_id: str
    state: MonitorState
    previous: MonitorState
    value: float | None
    n: int
    statistic: Statistic
    quantile: float | None
    window: str
    warning: float | None
    alert: float
    group: str | None = Field(description="``by=group`` when the monitor watches one group.")
    renotify: bool = Field(description="True: the state has not changed; sent again.")
    at: datetime
    judge_break: str | None = Field(
        default=None,
        description='"judge changed: ..." when the task\'s scores mix two or more judges, so '
        "the window may hold a break (docs/judge.md); absent otherwise.",
        exclude_if=lambda value: value is None,
    )


class MonitorEvents(BaseModel):
    """``data`` of a monitor event: every monitor of one task whose state changed in one check,
    in one event per webhook (its type ``monitor.alert`` when any of them alerts, else
    ``monitor.resolved``)."""

    task_id: str
    at: datetime
    monitors: list[MonitorEvent] = Field(description="By monitor name.")
