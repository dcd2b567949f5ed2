"""Task kinds: derivation when a task names none, and the ranking order of each kind."""

from __future__ import annotations

import pytest

from evalq.core.schemas import Task
from evalq.scoring.kinds import KINDS, RankedValues, derive_kind, kind_of, sort_key


def task(**fields: object) -> Task:
    return Task.model_validate({"id": "t", **fields})


def test_a_named_kind_wins_over_what_the_task_carries() -> None:
    named = task(kind="arena", reference_outputs=["a review"])
    assert kind_of(named, has_variants=True, has_scenarios=True).kind == "arena"


@pytest.mark.parametrize(
    ("fields", "variants", "scenarios", "kind"),
    [
        ({"required_scenarios": ["CORE-1"]}, False, False, "suite"),
        ({}, False, True, "suite"),
        ({"reference_outputs": ["a review"]}, True, False, "peerread"),
        ({}, True, False, "scylla"),
        ({}, False, False, "arena"),
    ],
)
def test_derived_kind(
    fields: dict[str, object], variants: bool, scenarios: bool, kind: str
) -> None:
    assert derive_kind(task(**fields), has_variants=variants, has_scenarios=scenarios) == kind


def ranked(rule: str, *rows: RankedValues) -> list[int]:
    keys = [sort_key(KINDS[rule], row) for row in rows]  # type: ignore[index]
    order = sorted(range(len(rows)), key=lambda i: keys[i])
    return order


def test_peerread_ranks_by_its_composite_and_partial_rows_last() -> None:
    best = RankedValues(partial=False, arena_unadjusted=10.0, peerread_composite=0.7)
    fast = RankedValues(partial=False, arena_unadjusted=99.0, peerread_composite=0.3)
    partial = RankedValues(partial=True, arena_unadjusted=50.0, peerread_composite=0.9)
    assert ranked("peerread", fast, partial, best) == [2, 0, 1]


def test_a_suite_ranks_a_passing_gate_first_then_by_final_score() -> None:
    blocked = RankedValues(False, 99.0, suite_passed=False, suite_final_score=0.95)
    passing = RankedValues(False, 10.0, suite_passed=True, suite_final_score=0.80)
    weaker = RankedValues(False, 50.0, suite_passed=True, suite_final_score=0.70)
    assert ranked("suite", blocked, weaker, passing) == [2, 1, 0]


def test_arena_ranks_by_the_unadjusted_overall() -> None:
    rows = [RankedValues(False, v) for v in (92.74, 98.28, 97.78)]
    assert ranked("arena", *rows) == [1, 2, 0]


def test_a_row_without_the_kinds_value_ranks_last_even_below_partial_rows() -> None:
    missing = RankedValues(partial=False, arena_unadjusted=90.0, peerread_composite=None)
    partial = RankedValues(partial=True, arena_unadjusted=10.0, peerread_composite=0.9)
    complete = RankedValues(partial=False, arena_unadjusted=50.0, peerread_composite=0.2)
    assert ranked("peerread", missing, partial, complete) == [2, 1, 0]
