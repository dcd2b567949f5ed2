"""The suite rank intervals' batched resamples give the one-at-a-time path's values to the bit,
and the intervals the draw loop gave before it was batched, seed for seed."""

from __future__ import annotations

import dataclasses
import random
from bisect import bisect_left

import numpy as np
import pytest

from evalq.core.profile import SuiteProfile
from evalq.scoring.kinds import KINDS, RankedValues, sort_key
from evalq.scoring.suite.aggregate import ScenarioFacts
from evalq.scoring.suite.resample import (
    batchable,
    resampled_final_score,
    resampled_final_scores,
)
from evalq.stats.rank_interval import RankedRow, RankInterval, _edges, rank_intervals

CATEGORIES = ("adversarial", "happy_path", "edge_case")


def facts(rng: random.Random, n: int) -> list[ScenarioFacts]:
    made = []
    for _ in range(n):
        total = rng.choice([None, rng.randint(0, 7)])
        made.append(
            ScenarioFacts(
                category=rng.choice(CATEGORIES),
                score=rng.choice([0.0, 1.0, rng.random()]),
                passed=rng.random() < 0.6,
                weight=rng.choice([0.0, 1.0, 1.5, rng.uniform(0.1, 3)]),
                expects_behaviors=rng.random() < 0.7,
                correct_outputs=None if total is None else rng.randint(0, total),
                total_outputs=total,
                true_positives=rng.choice([None, rng.randint(0, 5)]),
                false_positives=rng.choice([None, rng.randint(0, 5)]),
                false_negatives=rng.choice([None, rng.randint(0, 5)]),
                latency_ms=rng.choice([None, rng.uniform(10, 9000)]),
                tokens_used=rng.choice([None, rng.randint(1, 5000)]),
            )
        )
    return made


PROFILES = [
    SuiteProfile(),
    SuiteProfile(
        final_weights={
            "pass_rate": 1,
            "weighted_pass_rate": 0.5,
            "precision": 0.2,
            "recall": 0.3,
            "weighted_coverage": 0.7,
            "latency": 0.0,
            "accuracy": 0.1,
        },
        latency_budget_ms=3000,
    ),
]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("seed", range(12))
def test_batched_final_scores_equal_the_one_at_a_time_path_to_the_bit(
    profile: SuiteProfile, seed: int
) -> None:
    rng = random.Random(seed)
    units = facts(rng, rng.randint(2, 30))
    assert batchable(units, profile)
    drawn = np.asarray(
        [[rng.randrange(len(units)) for _ in units] for _ in range(300)], dtype=np.intp
    )
    expected = [resampled_final_score([units[p] for p in row], profile) for row in drawn.tolist()]
    assert resampled_final_scores(units, profile, drawn) == expected  # ==: same floats exactly


def test_facts_the_aggregation_refuses_are_left_to_the_one_at_a_time_path() -> None:
    good = facts(random.Random(1), 4)
    negative = dataclasses.replace(good[0], latency_ms=-1.0)
    assert not batchable([*good, negative], SuiteProfile())
    assert not batchable(good, SuiteProfile(final_weights={"nonsense": 1.0}))


def reference_draw(
    rows: list[RankedRow[ScenarioFacts]], resamples: int, seed: int, level: float
) -> list[RankInterval | None]:
    """The draw loop as it was before batching: `random.choices` per group and resample, one
    key per row and resample, competition ranks per resample."""
    groups: dict[object, list[int]] = {}
    for i, row in enumerate(rows):
        if len(row.units) >= 2:
            groups.setdefault(row.pairing if row.pairing is not None else i, []).append(i)
    rng = random.Random(seed)
    ranks_of: list[list[int]] = [[] for _ in rows]
    for _ in range(resamples):
        keys = [row.observed for row in rows]
        for members in groups.values():
            size = len(rows[members[0]].units)
            positions = rng.choices(range(size), k=size)
            for i in members:
                keys[i] = rows[i].key([rows[i].units[p] for p in positions])
        ordered = sorted(keys)
        for i, key in enumerate(keys):
            ranks_of[i].append(1 + bisect_left(ordered, key))
    resampled = {i for members in groups.values() for i in members}
    alpha = (1 - level) / 2
    return [
        RankInterval(*_edges(sorted(ranks), alpha)) if i in resampled else None
        for i, ranks in enumerate(ranks_of)
    ]


@pytest.mark.parametrize("seed", range(6))
def test_suite_intervals_equal_the_draw_loop_before_batching(seed: int) -> None:
    rng = random.Random(100 + seed)
    rule = KINDS["suite"]
    profile = PROFILES[seed % 2]
    shared = facts(rng, 8)
    rows = []
    for entry in range(6):
        units = shared if entry < 3 else facts(rng, rng.randint(1, 9))
        ranked = RankedValues(partial=False, arena_unadjusted=0.0, suite_passed=rng.random() < 0.7)

        def key(sample, ranked=ranked):  # type: ignore[no-untyped-def]
            final = resampled_final_score(sample, profile)
            return sort_key(rule, dataclasses.replace(ranked, suite_final_score=final))

        def batch(drawn, ranked=ranked, units=units):  # type: ignore[no-untyped-def]
            return [
                sort_key(rule, dataclasses.replace(ranked, suite_final_score=f))
                for f in resampled_final_scores(units, profile, drawn)
            ]

        observed = key(units)
        pairing = "shared" if entry < 3 else None
        rows.append(RankedRow(observed, units, key, pairing, batch))
    for resamples in (200, 1000):
        drawn = rank_intervals(rows, resamples=resamples, seed=seed, escalate=False)
        expected = reference_draw(rows, resamples, seed, 0.95)
        assert [r.interval for r in drawn.rows] == expected
        unbatched = [RankedRow(r.observed, r.units, r.key, r.pairing) for r in rows]
        again = rank_intervals(unbatched, resamples=resamples, seed=seed, escalate=False)
        assert again == drawn


def test_a_suite_board_s_intervals_are_those_of_its_rows_drawn_one_resample_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`suite_uncertainty` as shipped (batched keys) against the same rows without `batch`."""
    from evalq.core.schemas import ScenarioResult
    from evalq.read import rank_uncertainty
    from evalq.stats import rank_interval

    rng = random.Random(7)
    behaviours = ["a", "b", "c"]

    def run(count: int) -> list[ScenarioResult]:
        return [
            ScenarioResult.model_validate(
                {
                    "id": f"S{i}",
                    "category": rng.choice(CATEGORIES),
                    "expected_behaviors": behaviours,
                    "observed_behaviors": rng.sample(behaviours, rng.randint(0, 3)),
                    "latency_ms": rng.uniform(10, 9000),
                }
            )
            for i in range(count)
        ]

    scenarios = [run(8) for _ in range(4)] + [run(5), run(1)]
    values = [
        RankedValues(partial=False, arena_unadjusted=0.0, suite_passed=rng.random() < 0.8)
        for _ in scenarios
    ]
    rule, profile = KINDS["suite"], SuiteProfile()
    batched = rank_uncertainty.suite_uncertainty(rule, values, scenarios, profile, level=0.95)

    drawn_rows: list[list[RankedRow[ScenarioFacts]]] = []
    shipped = rank_interval.rank_intervals

    def unbatched(rows, **kwargs):  # type: ignore[no-untyped-def]
        assert all(r.batch is not None for r in rows if r.units)  # as shipped: batched
        plain = [RankedRow(r.observed, r.units, r.key, r.pairing) for r in rows]
        drawn_rows.append(plain)
        return shipped(plain, **kwargs)

    monkeypatch.setattr(rank_uncertainty, "rank_intervals", unbatched)
    one_at_a_time = rank_uncertainty.suite_uncertainty(rule, values, scenarios, profile, level=0.95)
    assert batched == one_at_a_time
    assert any(r.interval is not None for r in batched.rows)
    assert reference_draw(drawn_rows[0], batched.resamples, 0, 0.95) == [
        r.interval for r in batched.rows
    ]
