"""Rank uncertainty: a bootstrap interval of each leaderboard row's rank (docs/scoring.md).

A row's rank rests on a sample: a Scylla variant's repeat runs, a suite run's scenarios. Another
sample of the same size may order the rows differently, and two rows whose ranks trade places
from one sample to the next are not separable. The method (a percentile bootstrap of ranks):

1. each row has its resampling units (runs, scenarios) and a key function that turns a sample
   of them into the row's sort key, the leaderboard's own ordering (smaller sorts first, equal
   keys tie);
2. draw ``resamples`` resamples from a `random.Random` seeded with ``seed``: in each, every row
   with at least `MIN_UNITS` units draws as many units as it has, with replacement; rows with
   the same ``pairing`` draw the same positions (a paired bootstrap: when two runs answered the
   same scenarios, a scenario drawn twice is drawn twice for both); a row with fewer units
   keeps its observed key in every resample and gets no interval;
3. rank the rows of each resample by standard competition ranking (1, 1, 3) of their keys;
4. a row's interval is the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of its ranks
   (`evalq.stats.bootstrap.quantile`, type 7), rounded outward to whole ranks (floor, ceil),
   so it is never narrower than the resampled ranks show;
5. two rows whose intervals overlap are not separable: the data do not say which ranks higher.
   A row without an interval is compared with no other.
"""

from __future__ import annotations

import math
import random
from bisect import bisect_left
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from evalq.stats.bootstrap import quantile

U = TypeVar("U")
Key = tuple[float, ...]
"""A row's sort key: smaller sorts first; equal keys share a rank."""

RESAMPLES = 1000
"""Resamples per board: the 2.5% and 97.5% quantiles of the ranks then rest on 25 ranks each."""
SEED = 0
"""The default seed: the same results give the same intervals on every read."""
LEVEL = 0.95
"""The default level of the intervals."""
MIN_UNITS = 2
"""Fewer units than this leave nothing to resample: one result resampled is that result."""


@dataclass(frozen=True)
class RankedRow(Generic[U]):
    """One row to rank: its observed key, its resampling units, and how a resample is scored.

    Attributes:
        observed: the row's key as the board ranks it (used as is when it has too few units).
        units: its resampling units (a variant's runs, a suite run's scenarios).
        key: turns a resample of ``units`` (same length, drawn with replacement) into its key.
        pairing: rows with the same pairing (not None) draw the same positions of their units,
            which must then be equally many and listed in the same order (e.g. by scenario id);
            None: the row draws on its own.
    """

    observed: Key
    units: Sequence[U]
    key: Callable[[Sequence[U]], Key]
    pairing: Hashable | None = None


@dataclass(frozen=True)
class RankInterval:
    """The bootstrap interval of a rank, in whole ranks (``low <= high``; 1 is best)."""

    low: int
    high: int

    def overlaps(self, other: RankInterval) -> bool:
        """Whether the two intervals share at least one rank."""
        return self.low <= other.high and other.low <= self.high


@dataclass(frozen=True)
class RowRanks:
    """One row's rank uncertainty.

    Attributes:
        interval: its rank interval; None when it had fewer than `MIN_UNITS` units.
        note: why there is no interval (None when there is one).
        not_separable_from: positions (in the rows given) of the rows whose interval overlaps
            this row's; empty for a row without an interval.
    """

    interval: RankInterval | None
    note: str | None
    not_separable_from: tuple[int, ...]


@dataclass(frozen=True)
class RankUncertainty:
    """Every row's rank interval and how they were drawn."""

    rows: tuple[RowRanks, ...]
    resamples: int
    seed: int
    level: float


def competition_ranks_of(keys: Sequence[Key]) -> list[int]:
    """Standard competition ranks of sort keys: 1 + the number of keys strictly smaller."""
    ordered = sorted(keys)
    return [1 + bisect_left(ordered, key) for key in keys]


def _groups(rows: Sequence[RankedRow[U]]) -> list[list[int]]:
    """Rows that draw together: one group per pairing, one per unpaired row; rows with too
    few units are in none."""
    groups: dict[Hashable, list[int]] = {}
    for i, row in enumerate(rows):
        if len(row.units) < MIN_UNITS:
            continue
        groups.setdefault(("paired", row.pairing) if row.pairing is not None else i, []).append(i)
    for members in groups.values():
        if len({len(rows[i].units) for i in members}) > 1:
            raise ValueError("rank_intervals: paired rows need equally many units")
    return list(groups.values())


def _note(count: int, unit: str) -> str:
    if count == 0:
        return f"no {unit}s to resample"
    return f"a single {unit}: nothing to resample"


def rank_intervals(
    rows: Sequence[RankedRow[U]],
    *,
    unit: str = "result",
    level: float = LEVEL,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> RankUncertainty:
    """The bootstrap interval of every row's rank, and which rows are not separable.

    Args:
        rows: every row of the board (a row without units still takes its place in the
            ranking of each resample).
        unit: what a unit is called, for the note of a row without an interval ("run").
        level: the intervals' level, in (0, 1).
        resamples: how many resamples to draw (at least 1).
        seed: the seed of the `random.Random` the resamples are drawn from.

    Returns:
        One `RowRanks` per row, in the order given.

    Raises:
        ValueError: ``level`` outside (0, 1), ``resamples`` below 1, or paired rows with
            different numbers of units.
    """
    if not 0 < level < 1:
        raise ValueError("rank_intervals: level must be between 0 and 1")
    if resamples < 1:
        raise ValueError("rank_intervals: resamples must be at least 1")
    groups = _groups(rows)
    rng = random.Random(seed)
    ranks_of: list[list[int]] = [[] for _ in rows]
    for _ in range(resamples):
        keys = [row.observed for row in rows]
        for members in groups:
            size = len(rows[members[0]].units)
            positions = rng.choices(range(size), k=size)
            for i in members:
                units = rows[i].units
                keys[i] = rows[i].key([units[p] for p in positions])
        for i, rank in enumerate(competition_ranks_of(keys)):
            ranks_of[i].append(rank)
    resampled = {i for members in groups for i in members}
    alpha = (1 - level) / 2
    intervals: list[RankInterval | None] = []
    for i, ranks in enumerate(ranks_of):
        if i not in resampled:
            intervals.append(None)
            continue
        ranks.sort()
        low, high = quantile(ranks, alpha), quantile(ranks, 1 - alpha)
        # outward to whole ranks; the slack keeps interpolation noise (2.0000000001) from
        # widening an interval whose quantile is a whole rank
        intervals.append(RankInterval(math.floor(low + 1e-9), math.ceil(high - 1e-9)))
    return RankUncertainty(
        rows=tuple(
            RowRanks(
                interval=interval,
                note=None if interval is not None else _note(len(rows[i].units), unit),
                not_separable_from=()
                if interval is None
                else tuple(
                    j
                    for j, other in enumerate(intervals)
                    if j != i and other is not None and interval.overlaps(other)
                ),
            )
            for i, interval in enumerate(intervals)
        ),
        resamples=resamples,
        seed=seed,
        level=level,
    )
