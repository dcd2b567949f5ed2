"""The robust Arena baseline's rules (``arena.baseline = "robust"``, docs/scoring.md).

Spec 000 scales every Arena score by its task's ranges: the lowest and highest time, cost,
tokens and tool calls of the task's runs. So a few runs far outside the rest (a flood of slow,
costly runs under new names) stretch a range and move every other run's score. The robust
baseline reads each figure over the task's agents (each agent's median once) and limits what a
few of them can do, by construction rather than by a detector:

- *the crowd counts as one* (`crowd_of`): agents that ran fewer tasks than the task's typical
  agent (new names, or names that sent one run elsewhere) count together as one agent, whatever
  their number;
- *a range reaches no further than `RANGE_FACTOR` times the agents' median* (`fenced_range`):
  its ends are the lowest and highest runs' values within [median / 5, median x 5]. The median
  moves by one agent's place per agent added, so values beyond that band cannot stretch the
  range unless they are half the agents; a run outside it still scores, at the range's end
  (0 or 100);
- *the crowd's runs are not in the ranges* (`evalq.scoring.arena.baseline.ranged_runs`): a
  range's ends are read from the other agents' runs, so a crowd of any size moves none.
"""

from __future__ import annotations

import statistics
from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

RANGE_FACTOR = 5.0
"""A range's ends lie within this factor of its median (the bundled demo's agents reach 4.2x,
the cost of `arena-data-sales-summary`; the flood attacks' values sit at 8.7x (tokens) to 170x
(cost): docs/scoring.md)."""

A = TypeVar("A", bound=Hashable)


def typical_standing(standings: Mapping[A, int]) -> float:
    """The median standing (tasks run) over the agents, each counted once per task it ran.

    Counting an agent once per task makes the typical standing follow the agents with the most
    history: to pull it down, names with thin histories must outnumber, in tasks run, the
    agents that have them (a name counted once would let as many names as agents do it)."""
    ordered = sorted(standings.values())
    total = sum(ordered)
    if total == 0:
        return 0.0
    middle = [(total - 1) // 2, total // 2]  # 0-based positions of statistics.median's values
    found: list[int] = []
    seen = 0
    for standing in ordered:
        seen += standing
        while middle and middle[0] < seen:
            found.append(standing)
            middle.pop(0)
    return (found[0] + found[1]) / 2


def crowd_of(standings: Mapping[A, int]) -> set[A]:
    """The agents whose standing (tasks on which they have evaluated runs, this one included)
    is below the task's `typical_standing`: the names that count together as one agent."""
    typical = typical_standing(standings)
    return {agent for agent, standing in standings.items() if standing < typical}


def centre_of(values: Sequence[float]) -> float:
    """The median of ``values`` (the agents' values of one figure), or, when that is 0, the
    median of the positive ones: a figure most agents did not use is scaled by those that did;
    0 when none is positive."""
    centre = float(statistics.median(values))
    if centre <= 0:
        positive = [v for v in values if v > 0]
        centre = float(statistics.median(positive)) if positive else 0.0
    return centre


def band(centre: float) -> tuple[float, float]:
    """The values a range may reach: [centre / `RANGE_FACTOR`, centre x `RANGE_FACTOR`]."""
    return centre / RANGE_FACTOR, centre * RANGE_FACTOR


def fenced_range(runs: Sequence[float], values: Sequence[float]) -> tuple[float, float]:
    """The lowest and highest of the ``runs``' values within the `band` around the `centre_of`
    the agents' ``values``; (centre, centre) in the rare case that no run lies within it.

    The ends are runs' values, so one agent's spread still spans the range (a task of one
    agent is scaled by its own runs); the band keeps values far from the agents' median out."""
    centre = centre_of(values)
    low, high = band(centre)
    inside = [v for v in runs if low <= v <= high]
    return (float(min(inside)), float(max(inside))) if inside else (centre, centre)
