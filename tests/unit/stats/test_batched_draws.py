"""The draws counted in batches give what one resample at a time gave, to the bit: Cliff's
delta's bootstrap, and a variant board's resampled median keys."""

from __future__ import annotations

import random

import numpy as np
import pytest

from evalq.read.rank_uncertainty import _medians_of, variant_key
from evalq.stats.bootstrap import quantile
from evalq.stats.comparison import _cliffs_delta, cliffs_delta, expanded_tail
from evalq.stats.rank_interval import uniforms


def reference_cliffs_delta(
    x: list[float], y: list[float], *, resamples: int, seed: int, paired: bool
) -> tuple[float, float, float]:
    """The bootstrap as it was drawn before batching: one resample at a time."""
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    order = np.argsort(ys, kind="stable")
    ordered = ys[order]
    low = np.searchsorted(ordered, xs, side="left")
    high = np.searchsorted(ordered, xs, side="right")
    n, m = len(xs), len(ys)
    rng = np.random.default_rng(seed)
    drawn = []
    for _ in range(resamples):
        if paired:
            x_weights = y_weights = np.bincount(rng.integers(0, n, size=n), minlength=n)
        else:
            x_weights = np.bincount(rng.integers(0, n, size=n), minlength=n)
            y_weights = np.bincount(rng.integers(0, m, size=m), minlength=m)
        below = np.concatenate(([0], np.cumsum(y_weights[order])))
        wins = below[low] - (m - below[high])
        drawn.append(float(x_weights @ wins) / (n * m))
    drawn.sort()
    alpha = expanded_tail(0.95, min(n, m))
    return _cliffs_delta(xs, ys), quantile(drawn, alpha), quantile(drawn, 1 - alpha)


@pytest.mark.parametrize("seed", range(20))
def test_cliffs_delta_in_batches_equals_one_resample_at_a_time(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 14)
    m = n if seed % 2 else rng.randint(1, 14)
    x = [round(rng.random(), rng.choice([1, 3])) for _ in range(n)]
    y = [round(rng.random(), rng.choice([1, 3])) for _ in range(m)]
    for paired in [False, True] if n == m else [False]:
        found = cliffs_delta(x, y, resamples=400, seed=seed, paired=paired)
        expected = reference_cliffs_delta(x, y, resamples=400, seed=seed, paired=paired)
        assert (found.delta, found.low, found.high) == expected


@pytest.mark.parametrize("size", [2, 3, 9, 10])
def test_variant_median_keys_in_batches_equal_variant_key(size: int) -> None:
    rng = random.Random(size)
    runs: list[float | None] = [rng.choice([0.0, 1.0, round(rng.random(), 3)]) for _ in range(size)]
    drawn = np.asarray([[rng.randrange(size) for _ in range(size)] for _ in range(500)])
    expected = [variant_key([runs[p] for p in row]) for row in drawn.tolist()]
    assert _medians_of(runs)(drawn) == expected


@pytest.mark.parametrize("seed", [0, 1, 12345])
def test_uniforms_are_the_next_random_calls_and_leave_the_generator_where_they_would(
    seed: int,
) -> None:
    ours, theirs = random.Random(seed), random.Random(seed)
    for count in (1, 7, 1000, 0, 33):
        assert uniforms(ours, count).tolist() == [theirs.random() for _ in range(count)]
    assert ours.getstate() == theirs.getstate()


@pytest.mark.parametrize("size", [1, 2, 5, 10, 17])
def test_draws_of_one_bound_are_one_stream_however_they_are_split_into_calls(size: int) -> None:
    """What taking a board's bootstrap draws in one call rests on (`cliffs_delta`)."""
    one, many = np.random.default_rng(size), np.random.default_rng(size)
    at_once = one.integers(0, size, size=(300, 2 * size))
    by_call = np.stack([many.integers(0, size, size=size) for _ in range(600)]).reshape(300, -1)
    assert (at_once == by_call).all()
    assert one.bit_generator.state == many.bit_generator.state
