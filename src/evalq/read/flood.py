"""A crowd of new agent names that stretches a task's range: said on the board.

Every Arena score is measured against the task's baseline, whose ranges (the fastest and the
slowest time, the cheapest and the dearest cost, the fewest and the most tokens and tool calls)
scale speed, cost and efficiency. A submitter who sends slow, costly runs under throwaway agent
names stretches those ranges and moves every other run's scores (12 runs from 6 names on one
demo task moved 8 of its 11 real runs). Names cannot be checked, so the runs are not held; what
is said (`range_note`) is that agents seen on no other task, at least `FLOOD_MIN_AGENTS` of them,
widen one of the ranges by more than `FLOOD_STRETCH` of its width without them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy.orm import Session

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


def _shown(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.4g}"


def _span(ranges: list[Range | None]) -> Range | None:
    found = [r for r in ranges if r is not None]
    if not found:
        return None
    return min(r[0] for r in found), max(r[1] for r in found)


def range_note(session: Session, *, task_id: str) -> str | None:
    """`range_notes` of one task."""
    return range_notes(session, task_ids=[task_id])[task_id]


def range_notes(session: Session, *, task_ids: Sequence[str]) -> dict[str, str | None]:
    """`stretched` of each task over the runs its baseline counts (evaluated, not held, not a
    copy), from its agents' tallies (`evalq.store.tallies`, kept at merge): one index range per
    `evalq.store.chunks.CHUNK` tasks and per crowd of agents, never a read of the runs."""
    agents = tallies.agent_figures(session, task_ids=task_ids)
    crowded = {t: found for t, found in agents.items() if len(found) > FLOOD_MIN_AGENTS}
    tasks_of = tallies.tasks_of(session, {a for found in crowded.values() for a in found})
    return {
        task_id: stretched(found, {a for a in found if tasks_of.get(a, set()) <= {task_id}})
        if task_id in crowded
        else None
        for task_id, found in agents.items()
    }
