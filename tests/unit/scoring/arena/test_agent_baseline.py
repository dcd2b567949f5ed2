"""The agent-weighted baseline (``arena.baseline = "agents"``): one agent's volume and a crowd of
new names move its medians by at most one agent's place; spec 000's median of runs follows them.
"""

from __future__ import annotations

from evalq.core.profile import ArenaProfile, Profile
from evalq.scoring.arena import ArenaRun, compute_baseline

RUNS = ArenaProfile(baseline="runs")
AGENTS = ArenaProfile(baseline="agents")


def run(i: str, time: float, tool: str, model: str = "m", tokens: int = 1_000) -> ArenaRun:
    return ArenaRun(
        submission_id=i, task_id="t", total_tokens=tokens, tool_calls=5, execution_time=time,
        cost_usd=time / 1_000, tool=tool, model=model,
    )  # fmt: skip


# 11 agents, one run each, 100 s .. 1,100 s: every median is 600 s either way.
REAL = [run(f"r{k}", 100.0 * (k + 1), f"agent-{k}") for k in range(11)]
ONE_AGENT = [run(f"one-{i}", 6_000.0, "agent-0") for i in range(30)]
CROWD = [run(f"new-{n}-{i}", 6_000.0, f"throwaway-{n}", f"m-{n}") for n in range(6) for i in (0, 1)]
NEW = {(f"throwaway-{n}", f"m-{n}") for n in range(6)}


def median_time(runs: list[ArenaRun], profile: ArenaProfile, new: set[tuple[str, str]]) -> float:
    return compute_baseline(runs, profile, new_agents=new).median_execution_time


def test_both_modes_agree_when_every_agent_sends_one_run() -> None:
    assert compute_baseline(REAL, RUNS) == compute_baseline(REAL, AGENTS)
    assert median_time(REAL, AGENTS, set()) == 600.0


def test_thirty_runs_from_one_agent_move_the_agent_median_by_one_place() -> None:
    # spec 000: 41 runs, 30 at 6,000 s: the median is 6,000 s
    assert median_time(REAL + ONE_AGENT, RUNS, set()) == 6_000.0
    # agents: agent-0's median becomes 6,000 s (its 1 run at 100 s, 30 at 6,000 s), the others
    # stay: 200 .. 1,100 and 6,000 -> 700 s, the next agent's value (one place)
    assert median_time(REAL + ONE_AGENT, AGENTS, set()) == 700.0
    # the same as agent-0 sending one run of 6,000 s
    one_run = [run("r0", 6_000.0, "agent-0"), *REAL[1:]]
    assert compute_baseline(REAL + ONE_AGENT, AGENTS) == compute_baseline(
        one_run, AGENTS
    ).model_copy(update={"submission_count": 41})


def test_six_new_names_with_two_runs_each_count_as_one_agent() -> None:
    # spec 000: 23 runs, 12 at 6,000 s: the median is 6,000 s
    assert median_time(REAL + CROWD, RUNS, NEW) == 6_000.0
    # agents: the 6 new names count as one agent at 6,000 s -> 12 values, (600 + 700) / 2
    assert median_time(REAL + CROWD, AGENTS, NEW) == 650.0
    one_agent = [*REAL, run("x", 6_000.0, "throwaway-0", "m-0")]
    assert median_time(REAL + CROWD, AGENTS, NEW) == median_time(one_agent, AGENTS, set())
    # names seen on other tasks are agents of their own: 17 values, the 9th is 900 s
    assert median_time(REAL + CROWD, AGENTS, set()) == 900.0


def test_two_new_names_are_not_a_crowd() -> None:
    two = [r for r in CROWD if r.tool in ("throwaway-0", "throwaway-1")]
    assert median_time(REAL + two, AGENTS, NEW) == 700.0  # 13 values, the 7th


def test_an_agent_median_is_the_median_of_its_runs() -> None:
    runs = [*REAL, run("a", 10.0, "agent-0"), run("b", 20.0, "agent-0"), run("c", 5.0, "agent-0")]
    # agent-0: 5, 10, 20, 100 -> 15 s; then 15, 200 .. 1,100: the 6th of 11 is 600 s
    baseline = compute_baseline(runs, AGENTS)
    assert (baseline.min_execution_time, baseline.median_execution_time) == (15.0, 600.0)
    assert baseline.submission_count == 14


def test_each_baseline_has_a_profile_hash_of_its_own() -> None:
    hashes = {Profile(arena=ArenaProfile(baseline=b)).hash for b in ("runs", "agents", "robust")}
    assert (
        len(hashes) == 3 and Profile().hash == Profile(arena=ArenaProfile(baseline="robust")).hash
    )
