"""Run plans: the largest plan holds; runs not sent are failures at the worst cost."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

from evalq.core.profile import Profile, ScyllaProfile
from evalq.core.results import ScyllaScores
from evalq.read.plans import counts_of, padded, plans_of, shortfalls
from evalq.read.run_counts import RunCounts


def scores(variant: str, cost: float, passed: bool = True) -> ScyllaScores:
    return ScyllaScores(
        passed=passed,
        pass_rate=1.0 if passed else 0.0,
        impl_rate=0.8,
        composite=0.9 if passed else 0.4,
        grade="B",
        cost_usd=cost,
        cost_of_pass=cost,
        duration_seconds=100.0,
        variant=variant,
        run_index=None,
    )


def row(variant: str, cost: float = 1.0, plan: int | None = None) -> Any:
    payload = {} if plan is None else {"planned_runs": plan}
    submission = SimpleNamespace(variant=variant, payload=payload)
    return SimpleNamespace(
        submission=submission, scores=SimpleNamespace(scylla=scores(variant, cost)), held=False
    )


def test_the_largest_plan_holds_and_the_profile_sets_a_floor() -> None:
    rows = [row("T0"), row("T1", plan=10), row("T1", plan=4)]
    assert plans_of(rows, ScyllaProfile()) == {"T1": 10}
    assert plans_of(rows, ScyllaProfile(planned_runs=12)) == {"T0": 12, "T1": 12}


def test_runs_not_sent_are_failures_at_the_worst_cost() -> None:
    rows = [row("T0", 2.0) for _ in range(4)] + [row("T1", 1.0, plan=4) for _ in range(2)]
    short = shortfalls(rows, ScyllaProfile())
    assert set(short) == {"T1"} and not short["T1"].withheld
    assert short["T1"].note().startswith("T1: 2 of 4 planned runs")
    runs = {v: [r.scores.scylla for r in rows if r.submission.variant == v] for v in ("T0", "T1")}
    found = padded(runs, short, rows, ScyllaProfile())
    added = found["T1"][2:]
    assert len(found["T1"]) == 4 and len(found["T0"]) == 4
    assert all(s.passed is False and s.composite == 0.0 and s.cost_usd == 2.0 for s in added)
    assert all(math.isinf(s.cost_of_pass or 0) for s in added)


def test_fewer_runs_than_the_peers_without_a_plan_are_withheld() -> None:
    rows = [row(v) for v in ("T0", "T2") for _ in range(10)] + [row("T1") for _ in range(5)]
    short = shortfalls(rows, ScyllaProfile())
    assert short["T1"].withheld and "T1: 5 runs, its peers 10" in short["T1"].note()
    assert set(short) == {"T1"}


def test_a_sample_is_judged_on_the_whole_tasks_counts() -> None:
    # 10 runs each of T0 and T1, sampled from 300 and 40 (T1 planned 60): T1 is short of its
    # plan and of its peers on all its runs, which the sample alone does not show
    rows = [row("T0") for _ in range(10)] + [row("T1") for _ in range(10)]
    assert shortfalls(rows, ScyllaProfile()) == {}
    assert counts_of(rows).sent == {"T0": 10, "T1": 10}
    whole = RunCounts({"T0": 300, "T1": 40}, {"T0": 300, "T1": 40}, {"T1": 60}, 5.0, 200.0)
    short = shortfalls(rows, ScyllaProfile(), whole)
    assert set(short) == {"T1"} and short["T1"].withheld
    assert (short["T1"].sent, short["T1"].planned, short["T1"].peers) == (40, 60, 300)
    runs = {v: [r.scores.scylla for r in rows if r.submission.variant == v] for v in ("T0", "T1")}
    found = padded(runs, short, rows, ScyllaProfile(), whole)
    # its 20 missing runs in the share its sample holds of its 40 runs: 5 for its 10
    assert len(found["T1"]) == 10 + 5 and len(found["T0"]) == 10
    assert all(s.cost_usd == 5.0 and s.duration_seconds == 200.0 for s in found["T1"][10:])


def test_a_profile_plan_is_part_of_the_profile_hash() -> None:
    # the figures it changes are kept with the profile they were drawn with
    changed = Profile.model_validate({"scylla": {"planned_runs": 10}})
    assert changed.hash != Profile().hash
