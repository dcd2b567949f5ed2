"""A leaderboard row's percentile: two bisections into the sorted keys give what counting every
other row gave (the definition before issue 27, O(n**2) over a board)."""

from __future__ import annotations

import random

import pytest

from evalq.read.leaderboard import _percentile


def counted(key: tuple[float, ...], keys: list[tuple[float, ...]]) -> float:
    """The definition, one comparison per row: 100 x (rows ranked strictly below + half the
    other rows tied) / (n - 1); 100 when alone."""
    if len(keys) <= 1:
        return 100.0
    below = sum(other > key for other in keys)
    tied = sum(other == key for other in keys) - 1
    return round(100.0 * (below + tied / 2) / (len(keys) - 1), 1)


@pytest.mark.parametrize("seed", range(20))
def test_bisected_percentiles_equal_the_counted_definition_on_random_boards(seed: int) -> None:
    rng = random.Random(seed)
    size = rng.randint(1, 300)
    # few distinct values, so ties are common; keys shaped as sort_key's (missing, partial, -v)
    keys = [
        (
            float(rng.random() < 0.05),
            float(rng.random() < 0.2),
            -round(rng.choice(range(20)) / 3, 4),
        )
        for _ in range(size)
    ]
    ordered = sorted(keys)
    assert [_percentile(k, ordered) for k in keys] == [counted(k, keys) for k in keys]


def test_a_board_of_one_is_at_100_and_extremes_span_0_to_100() -> None:
    assert _percentile((0.0, 0.0, -5.0), [(0.0, 0.0, -5.0)]) == 100.0
    keys = [(0.0, 0.0, -9.0), (0.0, 0.0, -5.0), (0.0, 1.0, -7.0)]
    ordered = sorted(keys)
    assert [_percentile(k, ordered) for k in keys] == [100.0, 50.0, 0.0]
