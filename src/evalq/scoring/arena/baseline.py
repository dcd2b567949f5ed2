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

    Args:
        runs: the task's runs (all with the same ``task_id``).
        profile: the Arena profile section.
        last_updated: timestamp to record (ISO 8601); the caller supplies it, keeping this pure.
        new_agents: the agents seen on no other task (read only in the agent-weighted baseline).

    Raises:
        InvalidInput: the runs belong to more than one task.
    """
    if len({run.task_id for run in runs}) > 1:
        raise InvalidInput([("runs", "a baseline is computed from the runs of one task")])
    count = len(runs)
    if count < profile.min_submissions:
        return baseline_from_values(count, [], [], [], [], [], profile, last_updated)

    def values(figure: Callable[[ArenaRun], float | None]) -> list[float]:
        measured = [(run, figure(run)) for run in runs]
        found = [(run, float(v)) for run, v in measured if v is not None]
        if profile.baseline == "runs":
            return [v for _, v in found]
        by_agent: dict[Agent, list[float]] = {}
        for run, value in found:
            by_agent.setdefault((run.tool, run.model), []).append(value)
        medians = {agent: float(statistics.median(v)) for agent, v in by_agent.items()}
        return agent_values(medians, new_agents)

    return baseline_from_values(
        count,
        values(lambda run: run.total_tokens),
        values(lambda run: run.tool_calls),
        values(lambda run: run.iterations),
        values(lambda run: run.measured_time),
        values(lambda run: run.measured_cost),
        profile,
        last_updated,
    )


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


def baseline_from_values(
    count: int,
    tokens: Sequence[float],
    calls: Sequence[float],
    iterations: Sequence[float],
    times: Sequence[float],
    costs: Sequence[float],
    profile: ArenaProfile,
    last_updated: str | None,
) -> Baseline:
    """The baseline of ``count`` runs from the values each figure is read over (runs' values, or
    agents' medians); with fewer than ``profile.min_submissions`` runs, the defaults."""
    defaults = profile.default_baseline
    if count < profile.min_submissions:
        tokens, calls, iterations, times, costs = [], [], [], [], []
    q25, q75 = _quartiles(tokens)
    return Baseline(
        submission_count=count,
        median_tokens=_median(tokens, defaults.median_tokens),
        min_tokens=float(min(tokens, default=defaults.min_tokens)),
        max_tokens=float(max(tokens, default=defaults.max_tokens)),
        q25_tokens=q25,
        q75_tokens=q75,
        median_tool_calls=_median(calls, defaults.median_tool_calls),
        min_tool_calls=float(min(calls, default=defaults.min_tool_calls)),
        max_tool_calls=float(max(calls, default=defaults.max_tool_calls)),
        median_execution_time=_median(times, defaults.median_execution_time),
        min_execution_time=float(min(times, default=defaults.min_execution_time)),
        max_execution_time=float(max(times, default=defaults.max_execution_time)),
        median_cost=_median(costs, defaults.median_cost),
        min_cost=float(min(costs, default=defaults.min_cost)),
        max_cost=float(max(costs, default=defaults.max_cost)),
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
