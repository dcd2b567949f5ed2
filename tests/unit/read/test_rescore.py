"""A baseline move rescores a task's standings set-wise (`Scorer.rescored`: numpy over columns of
usage) and finds, to the last bit, what the Arena's functions find one run at a time."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest

from evalq.core.profile import ArenaProfile, Profile
from evalq.core.schemas import Task
from evalq.core.weights import weighted_mean
from evalq.read.baseline import CurrentBaseline
from evalq.read.standings import CATEGORIES, CATEGORY_DIGITS, VALUE_DIGITS, Scorer
from evalq.read.view import TaskContext
from evalq.scoring.arena import ArenaRun, Baseline
from evalq.scoring.arena.cost import cost_score
from evalq.scoring.arena.efficiency import efficiency_score
from evalq.scoring.arena.overall import dimension_weights
from evalq.scoring.arena.scale import clamp_score
from evalq.scoring.arena.speed import speed_score

STORED = ["arena_key", *(f"{name}_key" for name in CATEGORIES)]


def one_at_a_time(context: TaskContext, row: Any, basis: str) -> dict[str, Any]:
    """The row's Arena columns as the functions give them for one run (what the merge stores;
    its correctness does not depend on the baseline)."""
    run = ArenaRun(
        submission_id=row.id,
        task_id=context.task.id,
        total_tokens=row.total_tokens,
        tool_calls=row.tool_calls,
        iterations=row.iterations,
        execution_time=row.execution_time,
        cost_usd=row.cost_usd,
    )
    baseline, profile = context.current.baseline, context.profile.arena
    dims = (
        efficiency_score(run, baseline, profile).score,
        speed_score(run, baseline, profile).score,
        cost_score(run, baseline, profile).score,
        row.correctness,
    )
    weights = dimension_weights(context.task, profile)
    mean = weighted_mean(dict(zip(CATEGORIES, dims, strict=True)), weights).value
    assert mean is not None
    return {
        "submission_id": row.id,
        "basis": basis,
        "arena_key": round(clamp_score(mean), VALUE_DIGITS),
        **{
            f"{name}_key": round(value, CATEGORY_DIGITS)
            for name, value in zip(CATEGORIES, dims, strict=True)
        },
    }


def random_context(rng: random.Random) -> TaskContext:
    def span(low: float, high: float) -> tuple[float, float]:
        a, b = rng.uniform(low, high), rng.uniform(low, high)
        if rng.random() < 0.2:  # a zero-width range: every run used the same
            return a, a
        return min(a, b), max(a, b)

    tokens, calls, time, cost = span(0, 9000), span(0, 30), span(1, 900), span(0.001, 2)
    baseline = Baseline(
        submission_count=50,
        median_tokens=tokens[0],
        min_tokens=tokens[0],
        max_tokens=tokens[1],
        q25_tokens=None,
        q75_tokens=None,
        median_tool_calls=calls[0],
        min_tool_calls=round(calls[0]),
        max_tool_calls=max(round(calls[0]), round(calls[1])),
        median_execution_time=time[0],
        min_execution_time=time[0],
        max_execution_time=time[1],
        median_cost=cost[0],
        min_cost=cost[0],
        max_cost=cost[1],
        median_iterations=rng.choice([1.0, 2.0, 2.5, 3.0, 4.5, 7.0]),
        is_default=False,
        time_is_default=False,
        cost_is_default=False,
    )
    arena = ArenaProfile(
        speed_exponent=rng.choice([0.7, 0.5, 1.0, 1.3, 0.33]),
        efficiency_weights={
            "tokens": rng.choice([0.5, 0.0, 0.25, 1.0]),
            "tool_calls": rng.choice([0.3, 0.0, 0.7]),
            "iterations": rng.choice([0.2, 0.1, 0.4]),
        },
        weights={
            "efficiency": rng.choice([0.3, 0.0, 0.1]),
            "speed": rng.choice([0.2, 0.4]),
            "cost": rng.choice([0.2, 0.0, 0.15]),
            "correctness": rng.choice([0.3, 0.6, 1.0]),
        },
    )
    current = CurrentBaseline(baseline, 3, 50, datetime(2026, 11, 29, tzinfo=UTC))
    return TaskContext(Task(id="t", category=None), Profile(arena=arena), current)


def random_rows(rng: random.Random, count: int) -> list[SimpleNamespace]:
    rows = []
    for index in range(count):
        rows.append(
            SimpleNamespace(
                id=f"run-{index}",
                total_tokens=rng.choice([0, 1, rng.randint(0, 12000), rng.randint(900, 1100)]),
                tool_calls=rng.randint(0, 40),
                iterations=rng.choice([1, 1, 2, 3, rng.randint(1, 12)]),
                execution_time=rng.choice([None, 0.0, rng.uniform(0.5, 1200), 60.0]),
                cost_usd=rng.choice([None, 0.0, rng.uniform(0.0001, 3)]),
                correctness=rng.choice([0.0, 100.0, rng.uniform(0, 100)]),
                problem=rng.choice([None] * 12 + ["stored under an older schema: output"]),
                **dict.fromkeys(STORED, None),  # nothing stored yet: every value moves
            )
        )
    return rows


@pytest.mark.parametrize("seed", range(40))
def test_rows_rescored_together_equal_each_run_scored_alone(seed: int) -> None:
    rng = random.Random(seed)
    context = random_context(rng)
    rows = random_rows(rng, 300)
    together = {row["submission_id"]: row for row in Scorer(context).rescored("4:p", rows)}
    valued = [row for row in rows if not row.problem]  # without a value: nothing to write
    assert set(together) == {row.id for row in valued}
    for row in valued:
        assert together[row.id] == one_at_a_time(context, row, "4:p")


def test_only_the_rows_whose_values_moved_are_written() -> None:
    rng = random.Random(7)
    context = random_context(rng)
    rows = [row for row in random_rows(rng, 200) if not row.problem]
    for row in rows[::2]:  # stored with the values this baseline gives them: unchanged
        vars(row).update({k: v for k, v in one_at_a_time(context, row, "").items() if "key" in k})
    rows[2].speed_key += 0.01  # one category apart: written
    written = {row["submission_id"] for row in Scorer(context).rescored("5:p", rows)}
    assert written == {row.id for row in rows[1::2]} | {rows[2].id}


def test_the_values_at_each_edge_of_a_range_score_as_alone() -> None:
    rng = random.Random(99)
    context = random_context(rng)
    baseline = context.current.baseline
    edges = [
        SimpleNamespace(
            id=f"edge-{index}",
            total_tokens=round(tokens),
            tool_calls=round(calls),
            iterations=iterations,
            execution_time=time,
            cost_usd=cost,
            correctness=50.0,
            problem=None,
            **dict.fromkeys(STORED, None),
        )
        for index, (tokens, calls, iterations, time, cost) in enumerate(
            [
                (baseline.min_tokens, baseline.min_tool_calls, 1, baseline.min_execution_time, 0),
                (baseline.max_tokens, baseline.max_tool_calls, 2, baseline.max_execution_time, 1),
                (0, 0, 40, None, baseline.min_cost),
                (10**9, 10**4, 3, 10**6, baseline.max_cost),
            ]
        )
    ]
    together = {row["submission_id"]: row for row in Scorer(context).rescored("b", edges)}
    assert [together[row.id] for row in edges] == [one_at_a_time(context, r, "b") for r in edges]
