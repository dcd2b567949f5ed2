"""The robust baseline (``arena.baseline = "robust"``, the default): names thinner than the
task's typical agent count as one agent, and a range reaches no further than 5x the agents'
median, so a flood moves no range, whatever its names' count or their other tasks."""

from __future__ import annotations

from dataclasses import replace

from evalq.core.profile import ArenaProfile
from evalq.scoring.arena import ArenaRun, Baseline, compute_baseline
from evalq.scoring.arena.robust import (
    RANGE_FACTOR,
    crowd_of,
    fenced_range,
    typical_standing,
)

ROBUST = ArenaProfile()
SPEC = ArenaProfile(baseline="runs")
Agent = tuple[str, str]


def run(i: str, time: float, tool: str, model: str = "m", tokens: int = 40_000) -> ArenaRun:
    return ArenaRun(
        submission_id=i, task_id="t", total_tokens=tokens, tool_calls=10 + int(time) % 7,
        execution_time=time, cost_usd=time / 1_000, tool=tool, model=model,
    )  # fmt: skip


# 11 agents that each ran 3 tasks, one run each here: 300 s .. 1,300 s (median 800 s)
REAL = [run(f"r{k}", 100.0 * (k + 3), f"agent-{k}") for k in range(11)]
STANDINGS: dict[Agent, int] = {(f"agent-{k}", "m"): 3 for k in range(11)}


def slow_names(names: int, runs: int = 2) -> list[ArenaRun]:
    """``names`` new agent names, ``runs`` slow, costly runs each (5,000 s and more)."""
    return [
        run(f"n{n}-{i}", 5_000.0 + 1_500 * i, f"throwaway-{n}", f"m-{n}", tokens=400_000)
        for n in range(names)
        for i in range(runs)
    ]


def with_standing(runs: list[ArenaRun], standing: int) -> dict[Agent, int]:
    return STANDINGS | {(r.tool, r.model): standing for r in runs}


def ranges(baseline: Baseline) -> tuple[float, ...]:
    return (
        baseline.min_execution_time, baseline.max_execution_time, baseline.min_cost,
        baseline.max_cost, baseline.min_tokens, baseline.max_tokens, baseline.min_tool_calls,
        baseline.max_tool_calls,
    )  # fmt: skip


def test_the_typical_standing_counts_each_agent_once_per_task_it_ran() -> None:
    # 11 agents of 3 tasks and 12 names of 2: 33 against 24, the median of the 57 is 3
    standings = {f"a{k}": 3 for k in range(11)} | {f"n{k}": 2 for k in range(12)}
    assert typical_standing(standings) == 3.0
    assert crowd_of(standings) == {f"n{k}" for k in range(12)}
    # counted once per agent, the 12 names would be the median (2) and no crowd
    assert typical_standing({"a": 1, "b": 2}) == 2.0  # 1, 2, 2
    assert typical_standing({"a": 1}) == 1.0 and crowd_of({"a": 1}) == set()
    assert crowd_of({"a": 1, "b": 1, "c": 1}) == set()  # one task's first agents are all new


def test_a_range_reaches_no_further_than_five_times_the_agents_median() -> None:
    agents = [100.0, 200.0, 300.0]
    assert fenced_range([100.0, 200.0, 300.0, 1_000.0, 1_001.0], agents) == (100.0, 1_000.0)
    assert fenced_range([39.0, 40.0, 300.0], agents) == (40.0, 300.0)  # 200 / 5 = 40
    assert RANGE_FACTOR == 5.0
    # a median of 0 (most agents made no tool call): the band is read around the others
    assert fenced_range([0.0, 0.0, 0.0, 4.0, 6.0, 90.0], [0.0, 0.0, 0.0, 4.0, 6.0]) == (4.0, 6.0)
    assert fenced_range([0.0, 0.0], [0.0]) == (0.0, 0.0)


def test_every_agent_once_with_one_run_each_is_the_spec_baseline() -> None:
    assert compute_baseline(REAL, ROBUST, standings=STANDINGS) == compute_baseline(REAL, SPEC)


def test_a_task_of_one_agent_is_scaled_by_its_own_runs() -> None:
    runs = [run(f"s{i}", 100.0 * (i + 1), "solo") for i in range(6)]
    robust, spec = compute_baseline(runs, ROBUST), compute_baseline(runs, SPEC)
    assert ranges(robust) == ranges(spec)
    assert robust.median_execution_time == spec.median_execution_time == 350.0


def test_two_new_names_move_no_range_and_no_median_by_more_than_one_place() -> None:
    flood = slow_names(2)
    clean = compute_baseline(REAL, ROBUST, standings=STANDINGS)
    after = compute_baseline(REAL + flood, ROBUST, standings=with_standing(flood, 1))
    assert ranges(after) == ranges(clean)
    # the two names count as one agent: 12 values, (800 + 900) / 2
    assert after.median_execution_time == 850.0
    spec = compute_baseline(REAL + flood, SPEC)
    assert spec.max_execution_time == 6_500.0 and spec.median_execution_time == 1_000.0


def test_six_names_that_each_ran_one_other_task_count_as_one_agent() -> None:
    # seen on another task, so not "new" (the agents baseline counts them as 6 agents); they
    # ran 2 tasks where the task's typical agent ran 3: thinner, so one agent together
    flood = slow_names(6)
    clean = compute_baseline(REAL, ROBUST, standings=STANDINGS)
    after = compute_baseline(REAL + flood, ROBUST, standings=with_standing(flood, 2))
    assert ranges(after) == ranges(clean)
    assert after.median_execution_time == 850.0
    agents = ArenaProfile(baseline="agents")
    assert compute_baseline(REAL + flood, agents).max_execution_time == 5_750.0


def test_names_with_the_typical_history_count_as_agents_a_limit() -> None:
    # 6 names that each ran 3 tasks, as the real agents did: 6 agents of 17, the median moves
    # 3 places (800 -> 1,100 s) and their runs of 5,000 s, within 5 x 1,100 = 5,500 s, stretch
    # the range (their 6,500 s do not): what such names can do (docs/scoring.md)
    flood = slow_names(6)
    after = compute_baseline(REAL + flood, ROBUST, standings=with_standing(flood, 3))
    assert after.median_execution_time == 1_100.0
    assert after.max_execution_time == 5_000.0


def test_thirty_runs_of_one_agent_move_no_range() -> None:
    volume = [run(f"v{i}", 6_000.0 + i, "agent-0", tokens=400_000) for i in range(30)]
    after = compute_baseline(REAL + volume, ROBUST, standings=STANDINGS)
    assert ranges(after) == ranges(compute_baseline(REAL, ROBUST, standings=STANDINGS))
    assert after.median_execution_time == 900.0  # agent-0's median is 6,014.5 s: one place


def test_a_flood_of_fast_cheap_runs_moves_no_range() -> None:
    quick = [run(f"q{n}-{i}", 5.0 + i, f"quick-{n}", tokens=900) for n in range(6) for i in (0, 1)]
    after = compute_baseline(REAL + quick, ROBUST, standings=with_standing(quick, 2))
    assert ranges(after) == ranges(compute_baseline(REAL, ROBUST, standings=STANDINGS))
    assert compute_baseline(REAL + quick, SPEC).min_execution_time == 5.0


def test_thin_names_inside_the_band_stretch_no_range() -> None:
    # within 5x the median the band lets values in; the crowd's runs are not read for the ends
    inside = [run(f"i{n}", 2_500.0, f"late-{n}") for n in range(2)]
    clean = compute_baseline(REAL, ROBUST, standings=STANDINGS)
    after = compute_baseline(REAL + inside, ROBUST, standings=with_standing(inside, 1))
    assert after.max_execution_time == clean.max_execution_time < 2_500.0


def test_names_with_the_typical_history_inside_the_band_stretch_a_range_as_agents_do() -> None:
    # the limit of the rule: the same slow runs from names that ran as many tasks as the others
    # are agents' runs, and a range reaches them
    typical = max(STANDINGS.values())
    inside = [run(f"i{n}", 2_500.0, f"late-{n}") for n in range(2)]
    after = compute_baseline(REAL + inside, ROBUST, standings=with_standing(inside, typical))
    assert after.max_execution_time == 2_500.0


def test_under_traced_usage_only_collected_runs_count() -> None:
    traced = ArenaProfile(usage="traced")
    collected = [replace(r, usage_collected=True) for r in REAL]
    halved = [run(f"h{k}", 50.0 * (k + 3), f"agent-{k}") for k in range(11)]  # own traces
    assert compute_baseline(collected + halved, traced, standings=STANDINGS) == compute_baseline(
        collected, traced, standings=STANDINGS
    )
    # under "any" every run counts
    assert compute_baseline(collected + halved, ROBUST).submission_count == 22
