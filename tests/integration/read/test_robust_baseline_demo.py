"""The robust Arena baseline (``arena.baseline = "robust"``, the default) on the bundled examples:
each flood class, replayed on a copy of the demo store, moves no real run's place among the real
runs on any Arena task (the flood's own runs take the places their scores earn), no range moves
(the crowd's runs are left out of them), and the board names the thin names whose runs reach
beyond the ranges (the crowd note), withholding nothing.

Under spec 000's baseline (``"runs"``, the default before) the same floods re-ranked 7-9 of the
flooded task's 11 real runs (docs/scoring.md, "Robust baselines by default"), so every test here
fails on it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.integration.read.test_agent_baseline_demo import ARENA, one_agent_flood
from tests.integration.read.test_attacks import FLOODED, flood
from tests.integration.read.test_copies import add_runs, examples
from tests.integration.read.test_held_runs import copy_of

from evalq.core.profile import profile_named
from evalq.core.schemas import Submission, Usage
from evalq.read.baseline import current_baseline
from evalq.read.compare import compare
from evalq.read.leaderboard import leaderboard
from evalq.scoring.arena.robust import RANGE_FACTOR
from evalq.store import queries
from evalq.store.db import session_scope

ELSEWHERE = "arena-data-sales-summary"
REAL = {s.id for s in examples("arena.jsonl")}
RANGES = ("execution_time", "cost", "tokens", "tool_calls")


def real_places(url: str) -> dict[str, dict[str, int | None]]:
    """Each Arena task's real (bundled) runs' places among the real runs: 1 + the real runs
    ranked strictly above (held runs: None)."""
    found = {}
    with session_scope(url) as session:
        for task_id in ARENA:
            ranks = {
                e.submission_id: e.rank
                for e in leaderboard(session, task_id=task_id).entries
                if e.submission_id in REAL
            }
            found[task_id] = {
                sid: None
                if rank is None
                else 1 + sum(other is not None and other < rank for other in ranks.values())
                for sid, rank in ranks.items()
            }
    return found


def board_facts(url: str, task_id: str) -> dict[str, Any]:
    with session_scope(url) as session:
        task = queries.get_task(session, task_id=task_id)
        baseline = current_baseline(session, task_id=task_id, profile=profile_named(task.profile))
        board = leaderboard(session, task_id=task_id)
    data = baseline.baseline.model_dump()
    return {
        "ranges": {f: (data[f"min_{f}"], data[f"max_{f}"]) for f in RANGES},
        "medians": {f: data[f"median_{f}"] for f in RANGES},
        "range_note": board.range_note,
        "crowd_note": board.crowd_note,
    }


def elsewhere(names: list[tuple[str, str]], task_id: str, tag: str) -> list[Submission]:
    """One slow, costly run of each of ``names`` on ``task_id``: the names' history."""
    model = next(s for s in examples("arena.jsonl") if s.task_id == task_id)
    return [
        model.model_copy(
            update={
                "id": f"{tag}-{task_id}-{n}",
                "tool": tool,
                "model": name,
                "output": f"{model.output} (run by {tool})",
                "usage": Usage(
                    input_tokens=round(300_000 * 1.05**n),
                    output_tokens=50_000,
                    tool_calls=120 + n,
                    iterations=3,
                    execution_time=5_000.0 + 300 * n,
                    cost_usd=25.0 + n,
                ),
            }
        )
        for n, (tool, name) in enumerate(names)
    ]


def names_of(runs: list[Submission]) -> list[tuple[str, str]]:
    return sorted({(r.tool, r.model) for r in runs})


def fast_cheap() -> list[Submission]:
    """12 fast, cheap runs from 6 names (2 each), each name with one run on another task: above
    every hold (20 s and more, 5,000 tokens, 2 tool calls), far under the task's agents."""
    model = next(s for s in examples("arena.jsonl") if s.task_id == FLOODED)
    runs = [
        model.model_copy(
            update={
                "id": f"quick-{name}-{i}",
                "tool": f"quick-{name}",
                "model": f"model-{name}",
                "output": f"{model.output} (quick attempt {i} by agent {name})",
                "usage": Usage(
                    input_tokens=4_000 + 100 * name + 10 * i,
                    output_tokens=1_000,
                    tool_calls=2,
                    iterations=1,
                    execution_time=20.0 + name + 2 * i,
                    cost_usd=0.002 + 0.001 * i,
                ),
            }
        )
        for name in range(6)
        for i in range(2)
    ]
    return runs + elsewhere(names_of(runs), ELSEWHERE, "quick")


def fast_cheap_inside_the_band() -> list[Submission]:
    """6 fast, cheap runs from 2 new names (3 each, each its own output): under every real run
    of the flooded task (14,000 tokens against 19,800 and more, 3 tool calls against 6, $0.05
    against $0.07) yet within `RANGE_FACTOR` of its agents' medians, with one outlier indicator
    at most and no copy of another's output, most of them not held: neither the band nor a hold
    keeps them out of the ranges (before the crowd's runs were left out of them, they stretched
    the tokens, tool calls and cost ranges, unsaid)."""
    real = [s for s in examples("arena.jsonl") if s.task_id == FLOODED]
    return [
        real[3 * name + i].model_copy(
            update={
                "id": f"brisk-{name}-{i}",
                "tool": f"brisk-{name}",
                "model": f"model-{name}",
                "output": f"{real[3 * name + i].output}\n(brisk attempt {i} by agent {name})",
                "usage": Usage(
                    input_tokens=13_000 + 300 * name + 100 * i,
                    output_tokens=1_000,
                    tool_calls=3,
                    iterations=1,
                    execution_time=80.0 + name + i,
                    cost_usd=0.05 + 0.001 * i,
                ),
            }
        )
        for name in range(2)
        for i in range(3)
    ]


def attack(name: str) -> list[Submission]:
    runs = flood()  # 6 throwaway names, 2 slow costly runs each (5,000-6,500 s, $25-35)
    if name == "2 new names":
        return [r for r in runs if r.tool in ("throwaway-0", "throwaway-1")]
    if name == "6 new names":
        return runs
    if name == "6 names, each with one run elsewhere":
        return runs + elsewhere(names_of(runs), ELSEWHERE, "history")
    if name == "one agent, 30 runs":
        return one_agent_flood()
    if name == "2 fast cheap new names inside the band":
        return fast_cheap_inside_the_band()
    assert name == "6 fast cheap names, each with one run elsewhere"
    return fast_cheap()


NAMED = {
    "2 new names",
    "6 new names",
    "6 names, each with one run elsewhere",
    "2 fast cheap new names inside the band",
}
"""The floods whose thin names' counted runs reach beyond the ranges: the crowd note names them."""


@pytest.mark.parametrize(
    "name",
    [
        "2 new names",
        "6 new names",
        "6 names, each with one run elsewhere",
        "one agent, 30 runs",
        "6 fast cheap names, each with one run elsewhere",
        "2 fast cheap new names inside the band",
    ],
)
def test_a_flood_moves_no_real_runs_place(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    url = copy_of(store, tmp_path)
    add_runs(url, attack(name), monkeypatch)
    before, after = real_places(store), real_places(url)
    moved = {t: sum(before[t][s] != after[t][s] for s in before[t]) for t in ARENA}
    print(f"{name}: real runs re-ranked among the real runs {moved}")
    assert moved == {task_id: 0 for task_id in ARENA}
    clean, flooded = board_facts(store, FLOODED), board_facts(url, FLOODED)
    assert flooded["ranges"] == clean["ranges"]  # no range moved
    if name == "2 fast cheap new names inside the band":  # the crowd rule alone kept them out
        with session_scope(url) as session:
            entries = leaderboard(session, task_id=FLOODED).entries
        brisk = [e for e in entries if e.submission_id.startswith("brisk-")]
        assert len(brisk) == 6 and sum(not e.held for e in brisk) >= 4  # most ranked, counted
    # the board names the thin names whose counted runs reach beyond the ranges, withholding
    # nothing; one agent's 30 runs are one agent's (it has the typical history), and the fast
    # cheap names past the band are held for review, listed apart
    assert flooded["range_note"] is None
    assert (flooded["crowd_note"] is not None) == (name in NAMED), flooded["crowd_note"]
    if name in NAMED:
        with session_scope(url) as session:
            compared = compare(
                session, tasks="arena-*", by="model", values=["claude-sonnet-4", "o3"]
            )
        # (and of the names' other task, where their one run each lies beyond the ranges too)
        assert f"{FLOODED}: {flooded['crowd_note']}" in compared.notes
        assert not any(c.conclusion.startswith("withheld") for c in compared.comparisons)


def test_names_with_the_typical_history_are_agents_and_stretch_no_further_than_the_band(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the limit: 6 names that each ran the two other Arena tasks too have the history of the
    # demo's agents, so they count as 6 agents; the median moves, and the range reaches no
    # further than 5x it (the flood's 5,000-6,500 s and $25-35 stay out of it)
    runs = flood()
    names = names_of(runs)
    history = [r for t in ARENA if t != FLOODED for r in elsewhere(names, t, "wide")]
    url = copy_of(store, tmp_path)
    add_runs(url, runs + history, monkeypatch)
    before, after = real_places(store), real_places(url)
    moved = {t: sum(before[t][s] != after[t][s] for s in before[t]) for t in ARENA}
    print(f"6 names, each with runs on 2 other tasks: real runs re-ranked {moved}")
    facts = board_facts(url, FLOODED)
    for figure in RANGES:
        high = facts["ranges"][figure][1]
        assert high <= RANGE_FACTOR * facts["medians"][figure], figure
    assert facts["ranges"]["execution_time"][1] < 5_000
