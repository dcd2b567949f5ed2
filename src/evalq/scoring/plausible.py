"""Usage a task's own runs make implausible: a time far under what its other agents take.

Spec 000 scores speed against the task's fastest and slowest runs, so a run that claims 1 ms
takes every speed point, and its `extremely_fast` indicator alone does not hold it (a hold needs
``outlier_min_flags`` indicators). Nothing checks a self-reported time, but the task's other
runs say what the work takes: a run faster than `FAST_FRACTION` of what the quicker agents need
is held for review (`IMPLAUSIBLY_FAST`) until a person accepts it.

Robustly defined, so a few runs cannot move the line: each agent (tool, model) counts once, by
the median of its measured times; a run is compared only with the *other* agents, so its own
agent's runs never vouch for it; and the line is `FAST_FRACTION` of the lower quartile
(`FAST_QUANTILE`) of those agents' medians, not of the single fastest, so one agent (or a crowd
of names under a quarter of the agents) claiming absurd times does not make them plausible.
Fewer than `MIN_OTHER_AGENTS` other agents with a time: nothing is decided. A time not reported
(or 0) already counts as the worst speed and is not held.
"""

from __future__ import annotations

from collections.abc import Mapping

Agent = tuple[str, str]

IMPLAUSIBLY_FAST = "implausibly_fast"
"""Review flag: the run's time is under the task's plausible floor (`speed_floor`)."""
FAST_FRACTION = 0.1
"""A run more than ten times faster than the quicker quarter of the other agents is held. On the
bundled Arena tasks the fastest run of a task takes 0.35-0.6 of the agents' lower quartile."""
FAST_QUANTILE = 0.25
"""Which of the other agents' median times sets the line (type-7 quantile)."""
MIN_OTHER_AGENTS = 3
"""Other agents with a measured time needed before anything is decided."""


def lower_quantile(values: list[float], level: float) -> float:
    """Type-7 (linear) quantile of a non-empty list."""
    ordered = sorted(values)
    position = level * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def speed_floor(agent_times: Mapping[Agent, float], agent: Agent) -> float | None:
    """The fastest plausible time for a run of ``agent``: `FAST_FRACTION` of the `FAST_QUANTILE`
    of the other agents' median times (``agent_times``: each agent's median measured time);
    None with fewer than `MIN_OTHER_AGENTS` other agents."""
    others = [time for other, time in agent_times.items() if other != agent]
    if len(others) < MIN_OTHER_AGENTS:
        return None
    return FAST_FRACTION * lower_quantile(others, FAST_QUANTILE)


def implausibly_fast(time: float | None, agent: Agent, agent_times: Mapping[Agent, float]) -> bool:
    """Whether a measured ``time`` is under ``agent``'s `speed_floor` (a time not measured is
    never implausible: it already scores as the worst)."""
    if time is None:
        return False
    floor = speed_floor(agent_times, agent)
    return floor is not None and time < floor
