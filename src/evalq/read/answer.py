"""An Arena board's answer, before its rows: who leads, by how much over the next agent, and
whether the board can tell them apart at all.

A place on an Arena board is one run's score. When the leader's agent and the next agent each
ran once on the task, their order is one draw each: the board says so instead of implying a
winner. When they ran several times, their places still compare runs, not agents; the answer
points to `evalq compare` (the paired or unpaired test of the groups' scores) for that question.
The UI's board (`evalq.read.board_page`) and the static report (`evalq.read.report_data`)
build it with `arena_answer`, so they say the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import Field

from evalq.read.leaderboard import LeaderboardEntry
from evalq.read.reply import Reply

Agent = tuple[str, str]
"""(tool, model): who ran."""


class Contender(Reply):
    """A run at the top of the board and how many ranked runs its agent has on the task."""

    submission_id: str
    tool: str
    model: str
    overall: float
    runs: int = Field(description="Ranked runs of this agent (tool, model) on the task.")


class ArenaAnswer(Reply):
    """Who leads an Arena board, the gap to the best run of another agent, how sure."""

    leader: Contender
    tied: int = Field(description="Runs sharing first place (1: a clear leader).")
    next: Contender | None = Field(
        description="The best-placed run of another agent; null when one agent holds the "
        "board's first rows."
    )
    gap: float | None = Field(description="leader.overall - next.overall, in points.")
    separable: bool = Field(
        description="False when the leader's agent and the next each ran once: their order is "
        "one run each and says nothing about which agent is better."
    )
    compare_by: str | None = Field(
        description="The field that tells the two agents apart (model, else tool), for "
        "`evalq compare`; null without a next agent."
    )

    @property
    def statement(self) -> str:
        """The answer in sentences (plain text; the page escapes it)."""
        lead = self.leader
        first = f"Leader: {lead.submission_id} ({lead.tool} / {lead.model}) at {lead.overall:.2f}"
        if self.tied > 1:
            first += f", tied with {self.tied - 1} more run(s)"
        if self.next is None:
            return first + "; every run above the fold is this agent's."
        nxt = self.next
        second = (
            f"Next agent: {nxt.tool} / {nxt.model}, its best run {nxt.submission_id} at "
            f"{nxt.overall:.2f} ({self.gap:.2f} points behind)."
        )
        if not self.separable:
            third = (
                "Single runs: each of these agents ran once on this task, so this order is one "
                "draw each and cannot say which agent is better; run each several times."
            )
        else:
            third = (
                f"{lead.tool} / {lead.model} has {lead.runs} ranked run(s) here and "
                f"{nxt.tool} / {nxt.model} {nxt.runs}: places compare runs; whether one agent "
                "is better is what `evalq compare` tests."
            )
        return f"{first}. {second} {third}"


def arena_answer(top: Sequence[LeaderboardEntry], runs: Mapping[Agent, int]) -> ArenaAnswer | None:
    """The answer from the board's first ranked rows (best first) and ranked runs per agent
    (at least the leader's and the next agent's); None for an empty board."""
    ranked = [e for e in top if e.rank is not None]
    if not ranked:
        return None
    lead = ranked[0]
    mine: Agent = (lead.tool, lead.model)
    other = next((e for e in ranked if (e.tool, e.model) != mine), None)

    def contender(entry: LeaderboardEntry) -> Contender:
        agent = (entry.tool, entry.model)
        return Contender(
            submission_id=entry.submission_id,
            tool=entry.tool,
            model=entry.model,
            overall=entry.overall,
            runs=runs.get(agent, 1),
        )

    leader = contender(lead)
    tied = sum(1 for e in ranked if e.rank == lead.rank)
    if other is None:
        return ArenaAnswer(
            leader=leader, tied=tied, next=None, gap=None, separable=True, compare_by=None
        )
    runner = contender(other)
    return ArenaAnswer(
        leader=leader,
        tied=tied,
        next=runner,
        gap=round(lead.overall - other.overall, 2),
        separable=leader.runs > 1 or runner.runs > 1,
        compare_by="model" if lead.model != other.model else "tool",
    )
