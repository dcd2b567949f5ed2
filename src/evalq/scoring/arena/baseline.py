"""Per-task baselines (spec 000, "Dynamic Baseline Updates"): the ranges runs are scored against."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from evalq.core.errors import InvalidInput
from evalq.core.profile import ArenaProfile
from evalq.scoring.arena.robust import crowd_of, fenced_range
from evalq.scoring.arena.run import ArenaRun


class Baseline(BaseModel):
    """Medians and ranges of a task's runs.

    ``is_default`` is True when the task had fewer than ``min_submissions`` runs and every figure
    comes from the profile's ``default_baseline``; the quartiles are then None (the profile has
    none). ``time_is_default`` / ``cost_is_default`` say that no run reported a time / cost, so
    those figures are the defaults even in a data baseline.
    """

    # The docstring is the API's description (docs/openapi.json). One shape: computed here,
    # stored as a baseline snapshot's ``data`` (``model_dump``), read back with
    # ``model_validate``, served as it is. A missing or unknown key, or a range that is not
    # finite or whose minimum exceeds its maximum, raises `InvalidInput` naming the field.
    model_config = ConfigDict(frozen=True, extra="forbid")

    submission_count: int
    median_tokens: float
    min_tokens: float
    max_tokens: float
    q25_tokens: float | None
    q75_tokens: float | None
    median_tool_calls: float
    min_tool_calls: float
    max_tool_calls: float
    median_execution_time: float
    min_execution_time: float
    max_execution_time: float
    median_cost: float
    min_cost: float
    max_cost: float
    median_iterations: float
    is_default: bool
    time_is_default: bool
    cost_is_default: bool
    last_updated: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _known_fields(cls, data: Any) -> Any:
        """A stored baseline with a missing or unknown key is named as such (`InvalidInput`)."""
        if isinstance(data, dict):
            names = set(cls.model_fields)
            unknown = sorted(set(data) - names)
            missing = sorted(n for n in names - set(data) if n != "last_updated")
            problems = [(f"baseline.{k}", "unknown field") for k in unknown]
            problems += [(f"baseline.{k}", "field required") for k in missing]
            if problems:
                raise InvalidInput(problems)
        return data

    @model_validator(mode="after")
    def _ranges(self) -> Baseline:
        problems = []
        for name in ("tokens", "tool_calls", "execution_time", "cost"):
            low, high = getattr(self, f"min_{name}"), getattr(self, f"max_{name}")
            if not (math.isfinite(low) and math.isfinite(high) and low <= high):
                problems.append((f"baseline.min_{name}", f"must be finite and <= max_{name}"))
        if problems:
            raise InvalidInput(problems)
        return self


Agent = tuple[str, str]
"""An agent: (tool, model)."""

FIGURES: dict[str, Callable[[ArenaRun], float | None]] = {
    "tokens": lambda run: run.total_tokens,
    "calls": lambda run: run.tool_calls,
    "iterations": lambda run: run.iterations,
    "times": lambda run: run.measured_time,
    "costs": lambda run: run.measured_cost,
}
"""Each figure of a baseline (`baseline_from_values`'s names) as a run measures it (None: not
measured; a time or cost of 0 is not measured, as in the spec)."""
RANGED = ("tokens", "calls", "times", "costs")
"""The figures a baseline has a range of."""

AGENT_CROWD = 3
"""Agents seen on no other task count together as one agent in an agent-weighted baseline when
they are at least this many (and some agent is not new): the crowd the board names
(`evalq.read.flood.FLOOD_MIN_AGENTS`)."""


def compute_baseline(
    runs: Sequence[ArenaRun],
    profile: ArenaProfile,
    *,
    last_updated: str | None = None,
    new_agents: AbstractSet[Agent] = frozenset(),
    standings: Mapping[Agent, int] | None = None,
) -> Baseline:
    """Baseline of one task from its runs.

    With fewer than ``profile.min_submissions`` runs every figure is the profile's
    ``default_baseline``. Otherwise tokens, tool calls and iterations use every run, while time
    and cost use only the runs that measured them (0 counts as missing, as in the spec) and fall
    back to the defaults when none did. Quartiles are ``statistics.quantiles(n=4)`` with its
    default ``method="exclusive"`` (the spec's call); with a single run both are that run's value.

    With ``profile.baseline == "agents"`` each figure is read over the agents instead of the
    runs: every agent (tool, model) that measured it contributes one value, the median of its
    runs' values (`agent_values`), so medians, quartiles and ranges weigh each agent once.

    With ``profile.baseline == "robust"`` (the default) each figure is read over the agents
    too, with the agents that ran fewer tasks than the task's typical agent counted together as
    one (`robust_values`); each range is the lowest and highest values within
    `evalq.scoring.arena.robust.RANGE_FACTOR` of that median
    (`evalq.scoring.arena.robust.fenced_range`) of the runs of the agents outside that crowd
    (`ranged_runs`), so neither a few values far outside the rest nor any number of thin names
    can stretch it.

    With ``profile.usage == "traced"`` only the runs whose usage the OTLP intake collected
    (``usage_collected``) count: the others are not ranked, so they do not scale the ranked
    runs' scores either.

    Args:
        runs: the task's runs (all with the same ``task_id``).
        profile: the Arena profile section.
        last_updated: timestamp to record (ISO 8601); the caller supplies it, keeping this pure.
        new_agents: the agents seen on no other task (read only in the agent-weighted baseline).
        standings: the number of tasks on which each agent has evaluated runs, this one
            included (read only in the robust baseline; an agent not in it counts 1).

    Raises:
        InvalidInput: the runs belong to more than one task.
    """
    if len({run.task_id for run in runs}) > 1:
        raise InvalidInput([("runs", "a baseline is computed from the runs of one task")])
    if profile.usage == "traced":
        runs = [run for run in runs if run.usage_collected]
    count = len(runs)
    if count < profile.min_submissions:
        return baseline_from_values(count, [], [], [], [], [], profile, last_updated)
    robust = profile.baseline == "robust"
    agents = {(run.tool, run.model) for run in runs}
    crowd = crowd_of({a: (standings or {}).get(a, 1) for a in agents}) if robust else set()
    measured = {name: _measured(runs, figure) for name, figure in FIGURES.items()}

    def values(found: list[tuple[Agent, float]]) -> list[float]:
        if profile.baseline == "runs":
            return [v for _, v in found]
        by_agent: dict[Agent, list[float]] = {}
        for agent, value in found:
            by_agent.setdefault(agent, []).append(value)
        medians = {agent: float(statistics.median(v)) for agent, v in by_agent.items()}
        return robust_values(medians, crowd) if robust else agent_values(medians, new_agents)

    read = {name: values(found) for name, found in measured.items()}
    ranges = {
        name: fenced_range([v for _, v in ranged_runs(measured[name], crowd)], read[name])
        for name in RANGED
        if robust and read[name]
    }
    return baseline_from_values(
        count, **read, profile=profile, last_updated=last_updated, ranges=ranges
    )


def ranged_runs(
    found: Sequence[tuple[Agent, float]], crowd: AbstractSet[Agent]
) -> Sequence[tuple[Agent, float]]:
    """The runs whose values a robust range's ends are read from: those of the agents outside
    the ``crowd``, when any of them measured the figure; else every run. So the crowd's runs,
    however many and wherever within the band, never move a range: they score against it (at
    its end when beyond it), and only a name with the typical history is counted in it."""
    settled = [(agent, value) for agent, value in found if agent not in crowd]
    return settled or found


def _measured(
    runs: Sequence[ArenaRun], figure: Callable[[ArenaRun], float | None]
) -> list[tuple[Agent, float]]:
    """Each run's agent and value of ``figure``, for the runs that measured it."""
    found = ((run, figure(run)) for run in runs)
    return [((run.tool, run.model), float(v)) for run, v in found if v is not None]


def agent_values(medians: Mapping[Agent, float], new_agents: AbstractSet[Agent]) -> list[float]:
    """The values an agent-weighted baseline reads for one figure: each agent's median once,
    except that the agents in ``new_agents``, when they are at least `AGENT_CROWD` and some other
    agent measured the figure, count together as one agent at the median of their medians.

    So one agent's runs, however many, move a median or a range by at most one agent's place,
    and so does a crowd of names seen on no other task."""
    crowd = [value for agent, value in medians.items() if agent in new_agents]
    others = [value for agent, value in medians.items() if agent not in new_agents]
    if len(crowd) >= AGENT_CROWD and others:
        return [*others, float(statistics.median(crowd))]
    return list(medians.values())


def robust_values(medians: Mapping[Agent, float], crowd: AbstractSet[Agent]) -> list[float]:
    """The values a robust baseline reads for one figure: each agent's median once, except the
    agents in ``crowd`` (`evalq.scoring.arena.robust.crowd_of`: those that ran fewer tasks than
    the task's typical agent), which count together as one agent at the median of their
    medians, however many they are."""
    members = [value for agent, value in medians.items() if agent in crowd]
    others = [value for agent, value in medians.items() if agent not in crowd]
    return [*others, float(statistics.median(members))] if members else others


def baseline_from_values(
    count: int,
    tokens: Sequence[float],
    calls: Sequence[float],
    iterations: Sequence[float],
    times: Sequence[float],
    costs: Sequence[float],
    profile: ArenaProfile,
    last_updated: str | None,
    *,
    ranges: Mapping[str, tuple[float, float]] | None = None,
) -> Baseline:
    """The baseline of ``count`` runs from the values each figure is read over (runs' values, or
    agents' medians); with fewer than ``profile.min_submissions`` runs, the defaults. Each range
    is the values' lowest and highest, or, for a figure named in ``ranges`` (`RANGED` names),
    the one given there (the robust baseline's `fenced_range`)."""
    defaults = profile.default_baseline
    if count < profile.min_submissions:
        tokens, calls, iterations, times, costs = [], [], [], [], []
        ranges = None
    q25, q75 = _quartiles(tokens)

    def ranged(name: str, values: Sequence[float], low: float, high: float) -> tuple[float, float]:
        if ranges is not None and name in ranges:
            return ranges[name]
        return float(min(values, default=low)), float(max(values, default=high))

    min_tokens, max_tokens = ranged("tokens", tokens, defaults.min_tokens, defaults.max_tokens)
    min_calls, max_calls = ranged("calls", calls, defaults.min_tool_calls, defaults.max_tool_calls)
    min_time, max_time = ranged(
        "times", times, defaults.min_execution_time, defaults.max_execution_time
    )
    min_cost, max_cost = ranged("costs", costs, defaults.min_cost, defaults.max_cost)
    return Baseline(
        submission_count=count,
        median_tokens=_median(tokens, defaults.median_tokens),
        min_tokens=min_tokens,
        max_tokens=max_tokens,
        q25_tokens=q25,
        q75_tokens=q75,
        median_tool_calls=_median(calls, defaults.median_tool_calls),
        min_tool_calls=min_calls,
        max_tool_calls=max_calls,
        median_execution_time=_median(times, defaults.median_execution_time),
        min_execution_time=min_time,
        max_execution_time=max_time,
        median_cost=_median(costs, defaults.median_cost),
        min_cost=min_cost,
        max_cost=max_cost,
        median_iterations=_median(iterations, defaults.median_iterations),
        is_default=not tokens,
        time_is_default=not times,
        cost_is_default=not costs,
        last_updated=last_updated,
    )


def _median(values: Sequence[float], default: float) -> float:
    return float(statistics.median(values)) if values else float(default)


def _quartiles(values: Sequence[float]) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    if len(values) == 1:
        return values[0], values[0]
    q25, _, q75 = statistics.quantiles(values, n=4, method="exclusive")
    return q25, q75
