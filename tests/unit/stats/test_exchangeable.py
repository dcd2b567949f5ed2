"""The note beside a rejected verdict the deciding test cannot vouch for (issue 47, item 8).

The rule (`evalq.stats.exchangeable`): only rejections carry it; below `CHECKABLE_FROM` values
on the smaller side (or pairs) every one does, since equal-mean data sets of different shapes
that the test calls different look like an honest shift there (bench/exchangeability.py); from
`CHECKABLE_FROM` on, where the skewness shows the shapes differ.
"""

from __future__ import annotations

import numpy as np

from evalq.stats.contrast import Observation, contrast
from evalq.stats.exchangeable import CHECKABLE_FROM, shape_note, skewness

NOTE = "cannot be trusted"


def unpaired(reference: list[float], other: list[float]) -> tuple[bool, tuple[str, ...]]:
    runs = [Observation("t", "A", v) for v in reference]
    runs += [Observation("t", "B", v) for v in other]
    (c,) = contrast(runs, ["A", "B"], resamples=300).comparisons
    assert c.design == "unpaired"
    return c.rejected, c.notes


def test_a_false_verdict_at_small_n_carries_the_note() -> None:
    """Equal means (0.5): a normal side, and a shifted exponential whose sample missed its
    tail (tight, low, unskewed), the kind of data set the test calls different in up to 14% of
    draws; nothing in it shows the shapes differ, so at 8 a side every rejection is noted."""
    normal = [0.45, 0.52, 0.5, 0.55, 0.48, 0.5, 0.53, 0.47]
    missed_tail = [0.31, 0.36, 0.33, 0.4, 0.35, 0.38, 0.32, 0.42]
    rejected, notes = unpaired(normal, missed_tail)
    assert rejected
    (note,) = [n for n in notes if NOTE in n]
    assert "8 values on the smaller side cannot show" in note and "docs/statistics.md" in note


def test_no_difference_carries_no_note() -> None:
    rejected, notes = unpaired([0.4, 0.5, 0.6, 0.45, 0.55], [0.42, 0.52, 0.58, 0.47, 0.5])
    assert not rejected and not any(NOTE in n for n in notes)


def test_every_rejection_below_the_checkable_size_is_noted_paired_too() -> None:
    size = CHECKABLE_FROM - 1
    reference = [0.5] * size
    other = [0.6 + 0.01 * i for i in range(size)]  # a clean, symmetric shift
    note = shape_note(reference, other, paired=True, rejected=True)
    assert note is not None and f"{size} pairs cannot show" in note
    assert shape_note(reference, other, paired=True, rejected=False) is None


def test_from_the_checkable_size_only_a_visible_shape_difference_is_noted() -> None:
    rng = np.random.default_rng(8)
    n = 30
    normal = rng.normal(0.5, 0.05, n).tolist()
    shifted = rng.normal(0.6, 0.05, n).tolist()
    assert shape_note(normal, shifted, paired=False, rejected=True) is None
    skewed = [0.3 + v for v in rng.exponential(0.2, n)]
    assert skewness(skewed) > 1.5
    note = shape_note(normal, skewed, paired=False, rejected=True)
    assert note is not None and "differ in shape" in note
    # paired: differences with one long tail, against symmetric ones
    base = [0.5] * n
    tailed = [0.5 + v for v in rng.exponential(0.1, n)]
    note = shape_note(base, tailed, paired=True, rejected=True)
    assert note is not None and "paired differences are skewed" in note
    symmetric = [0.5 + v for v in rng.normal(0.05, 0.05, n)]
    assert shape_note(base, symmetric, paired=True, rejected=True) is None


def test_skewness_is_the_moment_coefficient() -> None:
    assert skewness([1.0, 1.0, 1.0]) == 0.0
    assert skewness([0.0, 0.0, 0.0, 1.0]) > 1  # one high value: right-skewed
    assert abs(skewness([-1.0, 0.0, 1.0])) < 1e-12
