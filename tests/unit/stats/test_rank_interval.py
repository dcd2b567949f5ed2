"""Rank intervals: a percentile bootstrap of each row's competition rank."""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest

from evalq.stats import rank_interval
from evalq.stats.rank_interval import (
    RankedRow,
    RankInterval,
    competition_ranks_of,
    rank_intervals,
    undecided,
)


def by_mean(sample: Sequence[float]) -> tuple[float, ...]:
    """Higher mean ranks first (smaller key)."""
    return (-sum(sample) / len(sample),)


def row(*units: float, pairing: str | None = None) -> RankedRow[float]:
    return RankedRow(by_mean(units) if units else (0.0,), units, by_mean, pairing)


def intervals(
    rows: Sequence[RankedRow[float]], *, level: float = 0.95, resamples: int = 1000
) -> list[tuple[int, int] | None]:
    found = rank_intervals(rows, level=level, resamples=resamples)
    return [None if r.interval is None else (r.interval.low, r.interval.high) for r in found.rows]


def test_competition_ranks_of_keys_tie_at_the_best_rank() -> None:
    assert competition_ranks_of([(-0.9,), (-0.9,), (-0.8,)]) == [1, 1, 3]
    # the suite's order: (missing, partial, gate, -final): a passing gate beats a higher final
    assert competition_ranks_of([(0, 0, 1, -0.95), (0, 0, 0, -0.9), (0, 1, 0, -1.0)]) == [2, 1, 3]


def test_the_same_seed_gives_the_same_intervals() -> None:
    rows = [row(0.7, 0.9, 0.6, 0.8), row(0.75, 0.65, 0.8, 0.7), row(0.5, 0.95, 0.6, 0.9)]
    first = rank_intervals(rows, seed=11)
    assert first == rank_intervals(rows, seed=11)
    assert (first.seed, first.resamples, first.level) == (11, 1000, 0.95)


def test_clearly_separated_rows_get_one_rank_each_and_are_separable() -> None:
    found = rank_intervals([row(0.1, 0.2, 0.15), row(0.9, 0.8, 0.85)])
    assert [r.interval for r in found.rows] == [RankInterval(2, 2), RankInterval(1, 1)]
    assert all(r.not_separable_from == () and r.note is None for r in found.rows)


def test_overlapping_samples_give_overlapping_intervals_not_separable() -> None:
    found = rank_intervals([row(0.5, 0.9, 0.6, 0.8, 0.7), row(0.6, 0.85, 0.55, 0.75, 0.65)])
    first, second = found.rows
    assert first.interval == second.interval == RankInterval(1, 2)
    assert (first.not_separable_from, second.not_separable_from) == ((1,), (0,))


def test_a_row_with_one_unit_keeps_its_place_but_gets_no_interval() -> None:
    found = rank_intervals([row(0.5), row(0.2, 0.8), row()], unit="run")
    alone, spread, empty = found.rows
    assert (alone.interval, alone.note) == (None, "a single run: nothing to resample")
    assert (empty.interval, empty.note) == (None, "no runs to resample")
    # the fixed row at 0.5 (and the empty one, key 0.0) still take part in every ranking: the
    # spread row's mean is 0.2, 0.5 or 0.8, so it ranks 2 (or ties 1), 1 (tie) or 1
    assert spread.interval == RankInterval(1, 2)
    assert alone.not_separable_from == () and spread.not_separable_from == ()


def test_two_rows_of_two_units_by_hand() -> None:
    # A = [1, 3], B = [2, 4]: a resample's mean is A in {1, 2, 2, 3}, B in {2, 3, 3, 4}, the
    # 16 pairs equally likely. A ranks first (ties share rank 1) in 5 of them: (2, 2) twice,
    # (3, 2), (3, 3) twice; B ranks second only at (3, 2): 1 of 16 = 6.25%.
    rows = [row(1.0, 3.0), row(2.0, 4.0)]
    # level 0.95: A's ranks are 31% ones -> [1, 2]; B's 6.25% twos exceed the 2.5% tail -> [1, 2]
    assert intervals(rows, resamples=20_000) == [(1, 2), (1, 2)]
    # level 0.3 (the 35% and 65% quantiles): A's 31% ones fall inside the lower tail -> [2, 2];
    # B's 6.25% twos inside the upper one -> [1, 1]: separable at that level
    assert intervals(rows, resamples=20_000, level=0.3) == [(2, 2), (1, 1)]


def test_pairing_draws_the_same_units_for_rows_that_share_them() -> None:
    # A is B plus 1 on every unit: paired, A wins every resample; drawn independently,
    # B's mean reaches A's (1.0 = 1.0, a tie at rank 1) in 1 of 16 resamples
    paired = [row(1.0, 2.0, pairing="s"), row(0.0, 1.0, pairing="s")]
    assert intervals(paired) == [(1, 1), (2, 2)]
    alone = [row(1.0, 2.0), row(0.0, 1.0)]
    assert intervals(alone) == [(1, 1), (1, 2)]
    assert rank_intervals(alone).rows[1].not_separable_from == (0,)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="level"):
        rank_intervals([row(1.0, 2.0)], level=1.0)
    with pytest.raises(ValueError, match="resamples"):
        rank_intervals([row(1.0, 2.0)], resamples=0)
    with pytest.raises(ValueError, match="equally many"):
        rank_intervals([row(1.0, 2.0, pairing="s"), row(1.0, 2.0, 3.0, pairing="s")])


def test_an_edge_near_the_quantiles_level_is_undecided() -> None:
    # 1,000 ranks: 3% are 1 (the lower edge at the 2.5% quantile sits 0.5 points from its
    # level, inside 3 standard errors, 1.5 points); with 10% of ones it is decided
    near = [1] * 30 + [2] * 940 + [3] * 30
    clear = [1] * 100 + [2] * 800 + [3] * 100
    assert undecided([near], 0.95)
    assert not undecided([clear], 0.95)
    assert not undecided([None, clear], 0.95)  # a row not resampled decides nothing


def test_an_undecided_board_is_drawn_again_with_ten_times_the_resamples() -> None:
    # A = [1, 3], B = [2, 4]: B ranks second in 6.25% of resamples, close enough to 2.5% to be
    # undecided at 100 resamples and decided at 1,000
    rows = [row(1.0, 3.0), row(2.0, 4.0)]
    assert rank_intervals(rows, resamples=100, seed=3).resamples == 1000
    assert rank_intervals(rows, resamples=100, seed=3, escalate=False).resamples == 100
    assert rank_intervals(rows, resamples=1000, seed=3).resamples == 1000


def test_escalation_makes_the_interval_the_same_for_every_seed() -> None:
    # Two rows of ten runs whose second sits near the 2.5% cut: at a fixed 1,000 resamples 12
    # seeds give 3 different boards; drawn as evalq draws them, one.
    rows = [
        row(0.41, 0.58, 0.48, 0.42, 0.48, 0.42, 0.53, 0.42, 0.42, 0.47),
        row(0.56, 0.47, 0.55, 0.48, 0.52, 0.45, 0.51, 0.55, 0.54, 0.45),
    ]

    def boards(escalate: bool) -> set[tuple[tuple[int, int] | None, ...]]:
        found = (rank_intervals(rows, seed=seed, escalate=escalate) for seed in range(12))
        return {
            tuple(None if r.interval is None else (r.interval.low, r.interval.high) for r in f.rows)
            for f in found
        }

    assert len(boards(escalate=False)) == 3
    assert len(boards(escalate=True)) == 1


def test_drawing_in_slices_of_resamples_gives_the_figures_of_one_draw(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = [
        row(0.5, 0.9, 0.6, 0.8, 0.7),
        row(0.6, 0.85, 0.55, 0.75, 0.65, pairing="p"),
        row(0.4, 0.8, 0.65, 0.7, 0.9, pairing="p"),
        row(0.3),
    ]
    at_once = rank_intervals(rows, resamples=300, seed=5)
    monkeypatch.setattr(rank_interval, "DRAWN_AT_ONCE", 7)  # one resample (15 positions) a slice
    assert rank_intervals(rows, resamples=300, seed=5) == at_once
    monkeypatch.setattr(rank_interval, "DRAWN_AT_ONCE", 100)  # six resamples, the last slice short
    assert rank_intervals(rows, resamples=300, seed=5) == at_once


def test_uniforms_past_what_one_getrandbits_call_takes_are_the_next_random_calls() -> None:
    """2**25 values are 2**31 bits, one more than ``getrandbits`` takes (a 100k-run board's
    first draw asks for 10**8): they are the next ``random()`` calls, to the bit."""
    count = 1 << 25
    ours, theirs = random.Random(3), random.Random(3)
    drawn = rank_interval.uniforms(ours, count)
    assert len(drawn) == count
    draw = theirs.random
    checked = range(0, count, 99_991)
    for i in range(count):
        value = draw()
        if i in checked or i >= count - 3:
            assert drawn[i] == value, i
    assert ours.getstate() == theirs.getstate()


def test_a_board_of_runs_whose_draw_overflowed_gets_its_intervals() -> None:
    """Two rows of 20k runs at 1,000 resamples: 4 * 10**7 drawn positions, which raised
    OverflowError when they were asked of one ``getrandbits`` call."""
    size = 20_000
    low, high = np.linspace(0.1, 0.5, size), np.linspace(0.5, 0.9, size)

    def mean_key(values: npt.NDArray[np.float64]) -> RankedRow[float]:
        return RankedRow(
            by_mean(values.tolist()),
            values.tolist(),
            by_mean,
            batch=lambda drawn: [(-float(mean),) for mean in values[drawn].mean(axis=1)],
        )

    found = rank_intervals([mean_key(low), mean_key(high)], resamples=1000, escalate=False)
    assert [r.interval for r in found.rows] == [RankInterval(2, 2), RankInterval(1, 1)]
