"""The note beside a verdict whose two sides differ in spread or shape (issue 47, item 8)."""

from __future__ import annotations

from evalq.stats.contrast import Observation, contrast
from evalq.stats.exchangeable import shape_note, skewness

NARROW = [0.45, 0.48, 0.5, 0.52, 0.55, 0.5, 0.49, 0.51]
"""Mean 0.5, sd about 0.03."""
SKEWED = [0.31, 0.33, 0.35, 0.38, 0.42, 0.47, 0.64, 1.1]
"""Mean 0.5, a long right tail (sd about 0.27)."""


def unpaired(reference: list[float], other: list[float]) -> tuple[str, ...]:
    runs = [Observation("t", "A", v) for v in reference]
    runs += [Observation("t", "B", v) for v in other]
    (c,) = contrast(runs, ["A", "B"], resamples=300).comparisons
    assert c.design == "unpaired"
    return c.notes


def test_equal_means_of_different_spreads_carry_the_note_beside_the_verdict() -> None:
    notes = unpaired(NARROW, SKEWED)
    (note,) = [n for n in notes if "permutation test then asks" in n]
    assert "differ in spread" in note and "docs/statistics.md" in note


def test_a_shift_of_one_shape_carries_no_note() -> None:
    notes = unpaired([0.1, 0.2, 0.3, 0.4, 0.5], [0.6, 0.7, 0.8, 0.9, 1.0])
    assert not any("permutation test then asks" in n for n in notes)


def test_paired_differences_skewed_one_way_carry_the_note_symmetric_ones_none() -> None:
    skewed = shape_note([0.0] * 8, [0.01, 0.02, 0.0, 0.01, 0.03, 0.02, 0.01, 0.9], paired=True)
    assert skewed is not None and "paired differences are skewed" in skewed
    symmetric = [-0.2, -0.1, 0.0, 0.1, 0.2, -0.15, 0.15, 0.05]
    assert shape_note([0.0] * 8, symmetric, paired=True) is None


def test_skewness_is_the_moment_coefficient() -> None:
    assert skewness([1.0, 1.0, 1.0]) == 0.0
    assert skewness([0.0, 0.0, 0.0, 1.0]) > 1  # one high value: right-skewed
    assert abs(skewness([-1.0, 0.0, 1.0])) < 1e-12


def test_too_few_values_say_nothing_of_a_shape() -> None:
    assert shape_note([0.5, 0.5], [0.0, 1.0], paired=False) is None
