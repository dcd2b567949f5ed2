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
   A row without an interval is compared with no other;
6. an edge that another seed could move (`undecided`: the share of ranks below or at it is
   within `DECIDED_Z` Monte Carlo standard errors of the quantile's level) makes the board be
   drawn again, from the same seed, with `ESCALATED` times as many resamples; the result says
   how many it used. At 1,000 resamples the bundled Scylla board's intervals changed with the
   seed for 13 of 100 seeds, at 10,000 for none (`bench/seed_stability.py`).
"""

from __future__ import annotations

import math
import random
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np
import numpy.typing as npt

from evalq.stats.bootstrap import quantile

U = TypeVar("U")
Key = tuple[float, ...]
"""A row's sort key: smaller sorts first; equal keys share a rank."""

RESAMPLES = 1000
"""Resamples per board: the 2.5% and 97.5% quantiles of the ranks then rest on 25 ranks each."""
ESCALATED = 10
"""When an interval's edge is undecided at ``resamples`` (`undecided`), the board is drawn again
with this many times as many resamples (docs/scoring.md, "Rank uncertainty")."""
DECIDED_Z = 3.0
"""An edge is decided when the share of resampled ranks on either side of it is more than this
many Monte Carlo standard errors from the quantile's level."""
SEED = 0
"""The default seed: the same results give the same intervals on every read."""
LEVEL = 0.95
"""The default level of the intervals."""
MIN_UNITS = 2
"""Fewer units than this leave nothing to resample: one result resampled is that result."""
UNIFORMS_PER_CALL = 1 << 20
"""Values of ``rng.random()`` taken per ``getrandbits`` call by `uniforms` (64 bits each; a
call's bit count must fit a C int, 2**31 - 1)."""
DRAWN_AT_ONCE = 1 << 22
"""Drawn positions held at once by `_draw` (whole resamples, at least one): memory is bounded
by this, not by resamples times runs."""


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
        batch: optional, the keys of many resamples at once: given the drawn positions, one
            row per resample, the key `key` gives each (the same values, to the bit: it is a
            faster way to the same keys, never another statistic).
    """

    observed: Key
    units: Sequence[U]
    key: Callable[[Sequence[U]], Key]
    pairing: Hashable | None = None
    batch: Callable[[npt.NDArray[np.intp]], Sequence[Key]] | None = None


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
    escalate: bool = True,
) -> RankUncertainty:
    """The bootstrap interval of every row's rank, and which rows are not separable.

    Args:
        rows: every row of the board (a row without units still takes its place in the
            ranking of each resample).
        unit: what a unit is called, for the note of a row without an interval ("run").
        level: the intervals' level, in (0, 1).
        resamples: how many resamples to draw first (at least 1).
        seed: the seed of the `random.Random` the resamples are drawn from.
        escalate: draw again with `ESCALATED` times as many resamples when an edge is
            `undecided` (step 6); False keeps ``resamples``.

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
    intervals, ranks = _draw(rows, level=level, resamples=resamples, seed=seed)
    if escalate and undecided(ranks, level):
        resamples *= ESCALATED
        intervals, ranks = _draw(rows, level=level, resamples=resamples, seed=seed)
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


def undecided(ranks_of: Sequence[Sequence[int] | None], level: float) -> bool:
    """True when a resampled row's interval edge could move with another seed: for an edge at
    rank ``r`` of the lower quantile ``a``, the share of ranks <= r - 1 must be below ``a`` and
    the share <= r above it, each by more than `DECIDED_Z` standard errors
    ``sqrt(a (1 - a) / B)``; the same for the upper edge and ``1 - a``. ``ranks_of`` holds each
    row's sorted resampled ranks (None for a row not resampled)."""
    alpha = (1 - level) / 2
    for ranks in ranks_of:
        if not ranks:
            continue
        count = len(ranks)
        margin = DECIDED_Z * math.sqrt(alpha * (1 - alpha) / count)
        low, high = _edges(ranks, alpha)
        for edge, share in ((low, alpha), (high, 1 - alpha)):
            below = bisect_right(ranks, edge - 1) / count
            at = bisect_right(ranks, edge) / count
            if share - below <= margin or at - share <= margin:
                return True
    return False


def _edges(ranks: Sequence[int], alpha: float) -> tuple[int, int]:
    """Step 4: the quantiles of sorted ranks rounded outward to whole ranks; the slack keeps
    interpolation noise (2.0000000001) from widening an interval whose quantile is whole."""
    low, high = quantile(ranks, alpha), quantile(ranks, 1 - alpha)
    return math.floor(low + 1e-9), math.ceil(high - 1e-9)


def _draw(
    rows: Sequence[RankedRow[U]], *, level: float, resamples: int, seed: int
) -> tuple[list[RankInterval | None], list[list[int] | None]]:
    """Steps 2-4: each row's interval (None when it has too few units) and its sorted
    resampled ranks (None likewise).

    The draws are `random.Random(seed)`'s, in the order a loop over resamples, then groups,
    then positions takes them (what ``rng.choices(range(size), k=size)`` per group and
    resample would draw: ``floor(random() * size)``); a row's keys come from its `batch`
    function when it has one, else from `RankedRow.key` per resample; the ranks of every
    resample are counted at once. The resamples are drawn `DRAWN_AT_ONCE` positions at a time
    (whole resamples), so memory stays bounded however many runs a row has; the stream, and so
    every figure, is the one a single draw would take."""
    groups = _groups(rows)
    resampled = {i for members in groups for i in members}
    rng = random.Random(seed)
    keys: list[list[Key]] = [[] for _ in rows]
    width = sum(len(rows[members[0]].units) for members in groups)
    step = max(1, DRAWN_AT_ONCE // max(1, width))
    for start in range(0, resamples, step):
        count = min(step, resamples - start)
        positions = _positions(rows, groups, count, rng)
        for i, row in enumerate(rows):
            if i not in resampled:
                keys[i].extend([row.observed] * count)
        for members, drawn in zip(groups, positions, strict=True):
            for i in members:
                row = rows[i]
                if row.batch is not None:
                    keys[i].extend(row.batch(drawn))
                else:
                    units = row.units
                    keys[i].extend(row.key([units[p] for p in draw]) for draw in drawn.tolist())
    ranks_of = _competition_ranks(keys, resamples)
    alpha = (1 - level) / 2
    intervals: list[RankInterval | None] = []
    sorted_ranks: list[list[int] | None] = []
    for i in range(len(rows)):
        if i not in resampled:
            intervals.append(None)
            sorted_ranks.append(None)
            continue
        ranks = np.sort(ranks_of[:, i]).tolist()
        intervals.append(RankInterval(*_edges(ranks, alpha)))
        sorted_ranks.append(ranks)
    return intervals, sorted_ranks


def _positions(
    rows: Sequence[RankedRow[U]], groups: list[list[int]], resamples: int, rng: random.Random
) -> list[npt.NDArray[np.intp]]:
    """Each group's drawn positions, one row per resample: the stream of ``rng.random()``
    (`uniforms`) taken resample by resample, group by group, ``floor(u * size)`` as
    `random.choices` has it."""
    sizes = [len(rows[members[0]].units) for members in groups]
    width = sum(sizes)
    if not width:
        return []
    stream = uniforms(rng, resamples * width).reshape(resamples, width)
    drawn = []
    start = 0
    for size in sizes:
        drawn.append(np.floor(stream[:, start : start + size] * float(size)).astype(np.intp))
        start += size
    return drawn


def uniforms(rng: random.Random, count: int) -> npt.NDArray[np.float64]:
    """The next ``count`` values of ``rng.random()``, at once, and ``rng`` left where those
    calls leave it. CPython's ``random()`` takes two 32-bit outputs of the Mersenne Twister,
    ``a`` and ``b``, and returns ``(a >> 5) * 2**26 + (b >> 6)`` over ``2**53`` (exact in a
    double); ``getrandbits(64 * count)`` returns the same outputs, in order, as little-endian
    32-bit words. ``getrandbits`` takes its bit count as a C int, so the words are taken
    `UNIFORMS_PER_CALL` values per call (whole 32-bit words, so the calls read the same stream
    as one would: a board of 100k runs asks for 10^8 values, 6.4 * 10^9 bits)."""
    drawn = np.empty(count, dtype=np.float64)
    for start in range(0, count, UNIFORMS_PER_CALL):
        size = min(UNIFORMS_PER_CALL, count - start)
        words = np.frombuffer(rng.getrandbits(64 * size).to_bytes(8 * size, "little"), "<u4")
        high = (words[0::2] >> 5).astype(np.float64)
        low = (words[1::2] >> 6).astype(np.float64)
        drawn[start : start + size] = (high * 67108864.0 + low) * (1.0 / 9007199254740992.0)
    return drawn


def _competition_ranks(keys: Sequence[Sequence[Key]], resamples: int) -> npt.NDArray[np.int64]:
    """`competition_ranks_of` of every resample at once: ``keys[row][resample]``; returns the
    ranks as ``[resample, row]``. Each key is replaced by its place among the distinct keys,
    so equal keys share a code and smaller keys have smaller codes."""
    distinct = sorted({key for row in keys for key in row})
    code = {key: place for place, key in enumerate(distinct)}
    codes = np.array([[code[key] for key in row] for row in keys], dtype=np.int64).T
    if not codes.size:
        return np.ones((resamples, len(keys)), dtype=np.int64)
    ranks = np.ones_like(codes)
    for j in range(codes.shape[1]):  # rows are few (a board's variants or entries)
        ranks += codes[:, j : j + 1] < codes
    return ranks
