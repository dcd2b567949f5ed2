"""A crowd of agent names whose runs reach beyond a task's ranges: said on the board.

Every Arena score is measured against the task's baseline, whose ranges (the fastest and the
slowest time, the cheapest and the dearest cost, the fewest and the most tokens and tool calls)
scale speed, cost and efficiency. A submitter who sends slow, costly runs under throwaway agent
names stretches those ranges and moves every other run's scores (12 runs from 6 names on one
demo task moved 8 of its 11 real runs). Names cannot be checked, so the runs are not held. Under
the "runs" and "agents" baselines what is said (the range note of `flood_notes`, which withholds
the verdicts) is that agents seen on no other task, at least `FLOOD_MIN_AGENTS` of them, widen
one of the ranges by more than `FLOOD_STRETCH` of its width without them.

Under the robust baseline (``arena.baseline = "robust"``, the default) the crowd is every name
with fewer tasks than the task's typical agent (`evalq.scoring.arena.robust.crowd_of`), whatever
their number, and the ranges are read without their runs (`evalq.scoring.arena.baseline.
ranged_runs`): they cannot move another run's scores, so nothing is withheld, and the board says
when their runs lie beyond the baseline's ranges, scoring at their ends (`beyond`: the crowd
note).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy.orm import Session

from evalq.scoring.arena.baseline import Baseline
from evalq.scoring.arena.robust import crowd_of
from evalq.store import tallies
from evalq.store.tallies import Agent, AgentFigures

FLOOD_MIN_AGENTS = 3
"""New agent names (seen on no other task) that make a crowd."""
FLOOD_STRETCH = 0.25
"""A range wider by more than this share of its width without the crowd is stretched."""

NAMES = {
    "time": "execution time (s)",
    "cost": "cost (USD)",
    "tokens": "tokens",
    "calls": "tool calls",
}
"""The ranged figures (`evalq.store.tallies.FIGURES`), as the note names them."""

Range = tuple[float, float]


def stretched(agents: Mapping[Agent, AgentFigures], new: set[Agent]) -> str | None:
    """What the board says when the ``new`` agents (seen on no other task) are a crowd that
    stretches one of the task's ranges, else None."""
    crowd = [a for a in agents if a in new]
    others = [a for a in agents if a not in new]
    if len(crowd) < FLOOD_MIN_AGENTS or not others:
        return None
    moved = []
    for figure in NAMES:
        before = _span([agents[a].ranges[figure] for a in others])
        after = _span([agents[a].ranges[figure] for a in agents])
        if before is None or after is None:
            continue
        width = before[1] - before[0]
        stretch = (after[1] - after[0]) - width
        if stretch > FLOOD_STRETCH * max(width, abs(before[1]) * 1e-9, 1e-12):
            moved.append(
                f"{NAMES[figure]} from {_shown(before[0])}-{_shown(before[1])} "
                f"to {_shown(after[0])}-{_shown(after[1])}"
            )
    if not moved:
        return None
    runs = sum(agents[a].runs for a in crowd)
    return (
        f"{len(crowd)} agent names seen on no other task ({runs} runs) stretch this task's "
        f"range of {'; '.join(moved)}: every other run's Arena scores are measured against "
        "that range, so the ranks may have moved; the board's verdict is withheld"
    )


BASELINE_FIELDS = {
    "time": "execution_time",
    "cost": "cost",
    "tokens": "tokens",
    "calls": "tool_calls",
}
"""Each ranged figure's name in a `Baseline` (``min_...``, ``max_...``)."""


def beyond(
    agents: Mapping[Agent, AgentFigures], crowd: set[Agent], baseline: Baseline
) -> str | None:
    """What the board says when runs of the ``crowd`` (the names the robust baseline counts as
    one) lie beyond the ``baseline``'s range of some figure (so they score at its end), else
    None: the names that do, their runs, and each range they pass with their own span."""
    if baseline.is_default:
        return None
    defaults = {"time": baseline.time_is_default, "cost": baseline.cost_is_default}
    ranges: dict[str, tuple[float, float]] = {
        figure: (float(getattr(baseline, f"min_{name}")), float(getattr(baseline, f"max_{name}")))
        for figure, name in BASELINE_FIELDS.items()
        if not defaults.get(figure, False)  # no run measured it: the defaults, not a range
    }

    def passes(agent: Agent, figure: str) -> bool:
        theirs = agents[agent].ranges[figure]
        if theirs is None or figure not in ranges:
            return False
        low, high = ranges[figure]
        return theirs[0] < low or theirs[1] > high

    named = [a for a in agents if a in crowd and any(passes(a, f) for f in NAMES)]
    reached = []
    for figure in NAMES:
        theirs = _span([agents[a].ranges[figure] for a in named if passes(a, figure)])
        if theirs is not None:
            low, high = ranges[figure]
            reached.append(
                f"{NAMES[figure]} ({_shown(low)}-{_shown(high)}; theirs "
                f"{_shown(theirs[0])}-{_shown(theirs[1])})"
            )
    if not reached:
        return None
    runs = sum(agents[a].runs for a in named)
    return (
        f"{len(named)} agent name(s) with fewer tasks than this task's typical agent "
        f"({runs} runs) reach beyond its baseline's range of {'; '.join(reached)}: the "
        "baseline reads its ranges without them, so their runs score at the ranges' ends and "
        "move no other run's scores"
    )


def _shown(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.4g}"


def _span(ranges: list[Range | None]) -> Range | None:
    found = [r for r in ranges if r is not None]
    if not found:
        return None
    return min(r[0] for r in found), max(r[1] for r in found)


def flood_note(
    session: Session, *, task_id: str, robust: Baseline | None
) -> tuple[str | None, str | None]:
    """`flood_notes` of one task (``robust``: its baseline when its profile's is the robust
    one, else None)."""
    found = flood_notes(session, task_ids=[task_id], robust={task_id: robust} if robust else {})
    return found[task_id]


def flood_notes(
    session: Session, *, task_ids: Sequence[str], robust: Mapping[str, Baseline]
) -> dict[str, tuple[str | None, str | None]]:
    """Each task's (range note, crowd note) from its agents' tallies (`evalq.store.tallies`,
    kept at merge): one index range per `evalq.store.chunks.CHUNK` tasks and per crowd of
    agents (their standings, `evalq.store.tallies.standings_of`), never a read of the runs.
    For the tasks in ``robust`` (their profile's baseline is the robust one, the default; each
    with its current baseline) the range note is None and the crowd note says what `beyond`
    finds; under the others, the crowd note is None and the range note is `stretched`'s (which
    withholds the verdicts)."""
    agents = tallies.agent_figures(session, task_ids=task_ids)
    standing = tallies.standings_of(session, {a for found in agents.values() for a in found})
    found: dict[str, tuple[str | None, str | None]] = {}
    for task_id, figures in agents.items():
        if task_id in robust:
            crowd = crowd_of({a: standing[a] for a in figures})
            found[task_id] = (None, beyond(figures, crowd, robust[task_id]))
        elif len(figures) > FLOOD_MIN_AGENTS:
            new = {a for a in figures if standing[a] == 1}
            found[task_id] = (stretched(figures, new), None)
        else:
            found[task_id] = (None, None)
    return found
