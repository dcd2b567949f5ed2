"""compute_baseline: defaults below min_submissions, data at or above it, JSON round trip."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from evalq.core.errors import InvalidInput
from evalq.core.profile import ArenaProfile
from evalq.scoring.arena import ArenaRun, Baseline, compute_baseline


def five_runs(make_run: Callable[..., ArenaRun]) -> list[ArenaRun]:
    tokens = [100, 200, 300, 400, 500]
    calls = [1, 2, 3, 4, 10]
    times = [None, 10.0, 20.0, 0.0, 40.0]
    iterations = [1, 1, 2, 3, 5]
    return [
        make_run(
            submission_id=f"s{i}",
            total_tokens=tokens[i],
            tool_calls=calls[i],
            execution_time=times[i],
            iterations=iterations[i],
        )
        for i in range(5)
    ]


def test_four_runs_use_the_profile_defaults(
    make_run: Callable[..., ArenaRun], arena: ArenaProfile
) -> None:
    baseline = compute_baseline(five_runs(make_run)[:4], arena)
    d = arena.default_baseline
    assert baseline.is_default and baseline.time_is_default and baseline.cost_is_default
    assert baseline.submission_count == 4
    assert (baseline.min_tokens, baseline.median_tokens, baseline.max_tokens) == (
        d.min_tokens, d.median_tokens, d.max_tokens,
    )  # fmt: skip
    assert (baseline.min_execution_time, baseline.max_execution_time) == (60.0, 1800.0)
    assert (baseline.min_cost, baseline.median_cost, baseline.max_cost) == (0.01, 0.05, 0.20)
    assert baseline.median_iterations == d.median_iterations
    assert baseline.q25_tokens is None and baseline.q75_tokens is None


def test_five_runs_leave_the_defaults(make_run: Callable[..., ArenaRun]) -> None:
    # spec 000's baseline over runs (the robust default reads the quartiles over agents: one here)
    spec = ArenaProfile(baseline="runs")
    baseline = compute_baseline(five_runs(make_run), spec, last_updated="2026-01-01T00:00:00Z")
    assert not baseline.is_default
    assert baseline.submission_count == 5
    # tokens 100..500: median 300; exclusive quartiles at positions 6 * 0.25 = 1.5 -> 150 and
    # 6 * 0.75 = 4.5 -> 450
    assert (baseline.min_tokens, baseline.median_tokens, baseline.max_tokens) == (100, 300, 500)
    assert (baseline.q25_tokens, baseline.q75_tokens) == (150.0, 450.0)
    # tool calls 1, 2, 3, 4, 10
    assert (baseline.min_tool_calls, baseline.median_tool_calls, baseline.max_tool_calls) == (
        1, 3, 10,
    )  # fmt: skip
    # times: None and 0 are missing -> 10, 20, 40
    assert not baseline.time_is_default
    assert (
        baseline.min_execution_time,
        baseline.median_execution_time,
        baseline.max_execution_time,
    ) == (10.0, 20.0, 40.0)
    # no run reported a cost: the defaults, flagged
    assert baseline.cost_is_default
    assert (baseline.min_cost, baseline.median_cost, baseline.max_cost) == (0.01, 0.05, 0.20)
    # iterations 1, 1, 2, 3, 5 -> median 2
    assert baseline.median_iterations == 2.0
    assert baseline.last_updated == "2026-01-01T00:00:00Z"


def test_costs_use_only_runs_that_have_one(
    make_run: Callable[..., ArenaRun], arena: ArenaProfile
) -> None:
    costs = [0.02, None, 0.0, 0.10, 0.04]
    runs = [make_run(submission_id=f"s{i}", cost_usd=c) for i, c in enumerate(costs)]
    baseline = compute_baseline(runs, arena)
    # 0.02, 0.10, 0.04 -> min 0.02, median 0.04, max 0.10
    assert (baseline.min_cost, baseline.median_cost, baseline.max_cost) == (0.02, 0.04, 0.10)
    assert not baseline.cost_is_default


def test_min_submissions_comes_from_the_profile(make_run: Callable[..., ArenaRun]) -> None:
    one = compute_baseline([make_run(total_tokens=700)], ArenaProfile(min_submissions=1))
    assert not one.is_default
    # a single run: both quartiles are its value
    assert (one.min_tokens, one.q25_tokens, one.q75_tokens, one.max_tokens) == (700, 700, 700, 700)


def test_empty_runs_give_defaults(arena: ArenaProfile) -> None:
    baseline = compute_baseline([], arena)
    assert baseline.is_default and baseline.submission_count == 0


def test_runs_of_two_tasks_rejected(make_run: Callable[..., ArenaRun], arena: ArenaProfile) -> None:
    with pytest.raises(InvalidInput):
        compute_baseline([make_run(), make_run(submission_id="s2", task_id="t2")], arena)


def test_json_round_trip(make_run: Callable[..., ArenaRun], arena: ArenaProfile) -> None:
    baseline = compute_baseline(five_runs(make_run), arena)
    assert Baseline.model_validate(baseline.model_dump()) == baseline


def test_from_dict_names_bad_keys(make_baseline: Callable[..., Baseline]) -> None:
    data = make_baseline().model_dump()
    del data["min_cost"]
    data["colour"] = "red"
    with pytest.raises(InvalidInput) as error:
        Baseline.model_validate(data)
    assert set(error.value.problems) == {
        ("baseline.colour", "unknown field"),
        ("baseline.min_cost", "field required"),
    }


def test_reversed_range_rejected(make_baseline: Callable[..., Baseline]) -> None:
    with pytest.raises(InvalidInput):
        make_baseline(min_tokens=10.0, max_tokens=5.0)
