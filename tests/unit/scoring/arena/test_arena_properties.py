"""Hypothesis properties: every Arena score in [0, 100]; more of a cost never raises its score."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from evalq.core.profile import ArenaProfile
from evalq.core.schemas import Evidence, Task
from evalq.scoring.arena import (
    ArenaRun,
    Baseline,
    cost_score,
    iteration_score,
    score_arena_run,
    speed_score,
    token_score,
    tool_call_score,
)

PROFILE = ArenaProfile()
counts = st.integers(min_value=0, max_value=10**7)
seconds = st.floats(min_value=0.001, max_value=1e6, allow_nan=False)
dollars = st.floats(min_value=1e-6, max_value=1e3, allow_nan=False)


@st.composite
def ranges(draw: st.DrawFn, values: st.SearchStrategy[Any]) -> tuple[float, float]:
    a, b = draw(values), draw(values)
    return float(min(a, b)), float(max(a, b))


@st.composite
def baselines(draw: st.DrawFn) -> Baseline:
    tokens, calls = draw(ranges(counts)), draw(ranges(st.integers(0, 1000)))
    times, costs = draw(ranges(seconds)), draw(ranges(dollars))
    return Baseline(
        submission_count=draw(st.integers(0, 1000)),
        median_tokens=sum(tokens) / 2, min_tokens=tokens[0], max_tokens=tokens[1],
        q25_tokens=None, q75_tokens=None,
        median_tool_calls=sum(calls) / 2, min_tool_calls=calls[0], max_tool_calls=calls[1],
        median_execution_time=sum(times) / 2,
        min_execution_time=times[0], max_execution_time=times[1],
        median_cost=sum(costs) / 2, min_cost=costs[0], max_cost=costs[1],
        median_iterations=draw(st.floats(min_value=1, max_value=50)),
        is_default=False, time_is_default=False, cost_is_default=False,
    )  # fmt: skip


@st.composite
def runs(draw: st.DrawFn) -> ArenaRun:
    return ArenaRun(
        submission_id="s",
        task_id="t",
        total_tokens=draw(counts),
        tool_calls=draw(st.integers(0, 2000)),
        iterations=draw(st.integers(1, 100)),
        execution_time=draw(st.none() | st.just(0.0) | seconds),
        cost_usd=draw(st.none() | st.just(0.0) | dollars),
    )


def run(**fields: Any) -> ArenaRun:
    return ArenaRun(**{"submission_id": "s", "task_id": "t", "total_tokens": 1, "tool_calls": 1,
                       **fields})  # fmt: skip


@given(
    runs(),
    baselines(),
    st.sampled_from(["frontend_development", "debugging", "refactoring"]),
    st.sampled_from(["beginner", "intermediate", "advanced"]),
    st.booleans(),
)
def test_every_score_in_range(
    arena_run: ArenaRun, baseline: Baseline, category: str, difficulty: str, success: bool
) -> None:
    task = Task.model_validate(
        {"id": "t", "category": category, "difficulty": difficulty,
         "success_criteria": [{"type": "no_errors"}]}
    )  # fmt: skip
    score = score_arena_run(arena_run, task, Evidence(success=success), baseline, PROFILE)
    for value in (
        score.overall_score, score.unadjusted_score, score.efficiency_score, score.speed_score,
        score.cost_score, score.correctness_score, *score.efficiency_breakdown.values(),
    ):  # fmt: skip
        assert 0.0 <= value <= 100.0
    assert score.overall_score >= score.unadjusted_score - 1e-9  # difficulty factors are >= 1


@given(baselines(), counts, counts)
def test_more_tokens_never_raise_the_token_score(baseline: Baseline, a: int, b: int) -> None:
    low, high = sorted((a, b))
    assert token_score(run(total_tokens=high), baseline) <= token_score(
        run(total_tokens=low), baseline
    )


@given(baselines(), st.integers(0, 2000), st.integers(0, 2000))
def test_more_tool_calls_never_raise_the_tool_score(baseline: Baseline, a: int, b: int) -> None:
    low, high = sorted((a, b))
    assert tool_call_score(run(tool_calls=high), baseline) <= tool_call_score(
        run(tool_calls=low), baseline
    )


@given(baselines(), st.integers(1, 100), st.integers(1, 100))
def test_more_iterations_never_raise_the_iteration_score(
    baseline: Baseline, a: int, b: int
) -> None:
    low, high = sorted((a, b))
    assert iteration_score(run(iterations=high), baseline) <= iteration_score(
        run(iterations=low), baseline
    )


@given(baselines(), seconds, seconds)
def test_slower_never_raises_speed(baseline: Baseline, a: float, b: float) -> None:
    fast, slow = sorted((a, b))
    slow_score = speed_score(run(execution_time=slow), baseline, PROFILE)
    fast_score = speed_score(run(execution_time=fast), baseline, PROFILE)
    assert slow_score.score <= fast_score.score
    assert not slow_score.not_reported and not fast_score.not_reported


@given(baselines(), dollars, dollars)
def test_costlier_never_raises_cost(baseline: Baseline, a: float, b: float) -> None:
    cheap, dear = sorted((a, b))
    assert (
        cost_score(run(cost_usd=dear), baseline, PROFILE).score
        <= cost_score(run(cost_usd=cheap), baseline, PROFILE).score
    )
