"""Run plans: the largest plan holds; runs not sent are failures at the worst cost. A variant
with run tickets counts its ticketed runs and its expired tickets; one without says "not
pre-registered"."""

from __future__ import annotations

import itertools
import math
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from evalq.core.profile import Profile, ScyllaProfile
from evalq.core.results import ScyllaScores
from evalq.read.plans import (
    NOT_PRE_REGISTERED,
    counted_rows,
    counts_of,
    padded,
    planned_variant_runs,
    plans_of,
    shortfalls,
    with_shortfalls,
)
from evalq.read.run_counts import RunCounts
from evalq.read.variants import variants_analysis
from evalq.scoring.worth import analyse_variants
from evalq.store.tickets import VariantTickets

IDS = itertools.count()


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
    submission = SimpleNamespace(id=f"run-{next(IDS)}", variant=variant, payload=payload)
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


def ticketed(variant: str, sid: str, *, passed: bool = True, cost: float = 1.0) -> Any:
    submission = SimpleNamespace(id=sid, variant=variant, payload={})
    found = scores(variant, cost, passed)
    return SimpleNamespace(submission=submission, scores=SimpleNamespace(scylla=found), held=False)


def tickets(issued: int, used: list[str], *, waiting: int = 0, expired: int = 0) -> VariantTickets:
    due = datetime(2026, 12, 1, tzinfo=UTC) if waiting else None
    return VariantTickets(issued, frozenset(used), len(used), waiting, expired, due)


def test_a_registered_variant_counts_ticketed_runs_and_expired_tickets_as_failures() -> None:
    # T1 registered 6 runs, sent 3 with tickets (3 expired unused) and 2 without: 3 runs and
    # 3 failures count for it, the 2 unticketed are said, not counted
    rows = [row("T0", 2.0) for _ in range(6)]
    rows += [ticketed("T1", f"t{i}") for i in range(3)]
    rows += [ticketed("T1", f"extra{i}", cost=9.0) for i in range(2)]
    book = {"T1": tickets(6, ["t0", "t1", "t2"], expired=3)}
    assert [r.submission for r in counted_rows(rows, book)][6:] == [r.submission for r in rows[6:9]]
    runs, short = planned_variant_runs(rows, ScyllaProfile(), tickets=book)
    assert (short["T1"].sent, short["T1"].planned, short["T1"].aside) == (3, 6, 2)
    assert not short["T1"].withheld
    note = short["T1"].note()
    assert "T1: 3 of 6 registered runs due" in note
    assert "T1: 2 runs sent without a ticket are not counted" in note
    assert len(runs["T1"]) == 6 and [s.passed for s in runs["T1"]].count(False) == 3
    # the failures at the worst cost among every run (the set-aside ones too)
    assert all(s.cost_usd == 9.0 for s in runs["T1"][3:])


def test_pending_tickets_withhold_the_verdicts_until_they_are_used_or_expire() -> None:
    rows = [row("T0") for _ in range(4)] + [ticketed("T1", f"t{i}") for i in range(2)]
    short = shortfalls(rows, ScyllaProfile(), tickets={"T1": tickets(4, ["t0", "t1"], waiting=2)})
    assert short["T1"].withheld and short["T1"].planned == 2
    assert "T1: 2 of 4 tickets pending (due by 2026-12-01T00:00Z)" in short["T1"].note()


def test_a_registered_variant_with_every_ticket_used_says_nothing() -> None:
    rows = [ticketed(v, f"{v}-{i}") for v in ("T0", "T1") for i in range(3)]
    book = {v: tickets(3, [f"{v}-{i}" for i in range(3)]) for v in ("T0", "T1")}
    assert shortfalls(rows, ScyllaProfile(), tickets=book) == {}


def test_a_step_from_or_to_a_variant_without_tickets_says_not_pre_registered() -> None:
    rows = [ticketed(v, f"{v}-{i}") for v in ("T0", "T1", "T2") for i in range(5)]
    book = {v: tickets(5, [f"{v}-{i}" for i in range(5)]) for v in ("T0", "T1")}
    runs, short = planned_variant_runs(rows, ScyllaProfile(), tickets=book)
    analysis = variants_analysis(analyse_variants(runs, ScyllaProfile(), level=0.95))
    said = with_shortfalls(analysis, short, book)
    by_pair = {(s.source, s.target): s.reason for s in said.over_baseline + said.transitions}
    assert not by_pair[("T0", "T1")].startswith(NOT_PRE_REGISTERED)
    assert by_pair[("T1", "T2")].startswith(f"{NOT_PRE_REGISTERED}: T2")
    assert by_pair[("T0", "T2")].startswith(f"{NOT_PRE_REGISTERED}: T2")
    assert any(n.startswith(f"{NOT_PRE_REGISTERED}: T2") for n in said.run_plans)
    # a reader that does not read registrations (a comparison across tasks) says nothing
    assert with_shortfalls(analysis, short) == analysis
