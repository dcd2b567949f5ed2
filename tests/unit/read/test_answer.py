"""An Arena board answers first: who leads, the gap to the next agent, and whether single runs
can tell the two apart at all."""

from __future__ import annotations

from tests.unit.report.test_tabular import entry

from evalq.read.answer import arena_answer
from evalq.read.leaderboard import LeaderboardEntry


def ranked(sid: str, rank: int, tool: str, model: str, overall: float) -> LeaderboardEntry:
    base = entry(sid, tool=tool, model=model, variant=None)
    return base.model_copy(update={"rank": rank, "overall": overall, "ranking_value": overall})


TOP = [
    ranked("r1", 1, "aider", "gpt", 80.45),
    ranked("r2", 2, "aider", "gpt", 79.0),  # the leader's agent again: not "the next agent"
    ranked("r3", 3, "aider", "claude", 78.1),
]


def test_single_runs_of_both_agents_are_said_not_to_separate_them() -> None:
    answer = arena_answer(TOP, {("aider", "gpt"): 1, ("aider", "claude"): 1})
    assert answer is not None and answer.next is not None
    assert answer.next.submission_id == "r3" and answer.gap == 2.35
    assert answer.separable is False
    assert "Single runs" in answer.statement and "2.35 points behind" in answer.statement


def test_repeated_runs_point_to_the_comparison_by_the_field_that_differs() -> None:
    answer = arena_answer(TOP, {("aider", "gpt"): 2, ("aider", "claude"): 5})
    assert answer is not None and answer.separable is True
    assert answer.compare_by == "model"
    assert "has 2 ranked run(s) here" in answer.statement
    assert "Single runs" not in answer.statement


def test_ties_and_a_board_of_one_agent() -> None:
    tied = [TOP[0], TOP[1].model_copy(update={"rank": 1})]
    answer = arena_answer(tied, {("aider", "gpt"): 2})
    assert answer is not None and answer.tied == 2 and answer.next is None
    assert "tied with 1 more run(s)" in answer.statement
    assert arena_answer([], {}) is None
