"""False verdicts with equal means and different shapes: the test before and after
studentising, and the note beside a verdict it cannot vouch for.

    python bench/exchangeability.py [--datasets 1000] [--sizes 5,6,7,8,9,10,11,12] [--quick]

For each cell (a design and a way the two sides differ) and each n, draws ``--datasets`` seeded
data sets whose sides have equal means (or, in the ``shift`` cells, means 0.1 apart: the note's
cost on honest data) and counts the verdicts at alpha 0.05 of

- **old**: the permutation test of the raw mean difference (`two_sample_null`; paired, the
  sign flips of the differences' sum);
- **new**: the test comparisons decide with now (unpaired, the same splits of Welch's t,
  `welch_null`; paired, the sign flips of the paired t, which order the flips as the sum does,
  so the column repeats the old one: checked on every data set up to 12 pairs);
- **noted**: of the new test's false verdicts, the share with the note beside it
  (`evalq.stats.exchangeable.shape_note`, as `evalq.stats.contrast` calls it), and
  **bare**: the rate of false verdicts *without* the note (what a reader is asked to trust).

Cells, n a side (``2n`` on the second side in the ``unequal`` cells), unpaired then paired:
``one shape`` both normal (mean 0.5, sd 0.1); ``spread`` normal sd 0.05 vs 0.2; ``shape``
normal sd 0.05 vs a shifted exponential (0.3 + Exp(0.2): sd 0.2, right-skewed); ``skewed
differences`` (paired) the second side the first plus Gamma(4, 0.05) - 0.2 (mean 0, sd 0.1,
skewness 1); ``shift`` both normal sd 0.1, the second 0.1 higher. Every test is run as evalq runs
it (every split or sign flip where evalq enumerates them, else 2,000 seeded random ones).
``--quick``: n = 5 and 8, 40 data sets a cell.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from _common import figure, parse_args, ratio

ALPHA = 0.05
RESAMPLES = 2000
CHECKED_PAIRS = 12
"""Up to this many pairs the paired t's sign flips are enumerated beside the sum's (2**n rows)."""

Draw = Callable[[np.random.Generator, int], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class Cell:
    design: str
    name: str
    draw: Draw
    null: bool = True  # equal means: every rejection is a false verdict


def _normal(sd: float) -> Callable[[np.random.Generator, int], np.ndarray]:
    return lambda rng, n: rng.normal(0.5, sd, n)


def _exponential(rng: np.random.Generator, n: int) -> np.ndarray:
    return 0.3 + rng.exponential(0.2, n)  # mean 0.5, sd 0.2


def _two(
    first: Callable[[np.random.Generator, int], np.ndarray],
    second: Callable[[np.random.Generator, int], np.ndarray],
    factor: int = 1,
) -> Draw:
    return lambda rng, n: (first(rng, n), second(rng, factor * n))


def _skewed_differences(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    ref = rng.normal(0.5, 0.1, n)
    return ref, ref + rng.gamma(4.0, 0.05, n) - 0.2


def _paired_shift(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    ref = rng.normal(0.5, 0.1, n)
    return ref, ref + rng.normal(0.1, 0.1, n)


CELLS = (
    Cell("unpaired", "one shape", _two(_normal(0.1), _normal(0.1))),
    Cell("unpaired", "spread", _two(_normal(0.05), _normal(0.2))),
    Cell("unpaired", "shape", _two(_normal(0.05), _exponential)),
    Cell("unpaired", "spread, unequal n", _two(_normal(0.2), _normal(0.05), 2)),
    Cell("unpaired", "shape, unequal n", _two(_exponential, _normal(0.05), 2)),
    Cell("unpaired", "shift", _two(_normal(0.1), lambda rng, n: rng.normal(0.6, 0.1, n)), False),
    Cell("paired", "one shape", _two(_normal(0.1), _normal(0.1))),
    Cell("paired", "spread", _two(_normal(0.05), _normal(0.2))),
    Cell("paired", "shape", _two(_normal(0.05), _exponential)),
    Cell("paired", "skewed differences", _skewed_differences),
    Cell("paired", "shift", _paired_shift, False),
)


def paired_t_p(d: np.ndarray) -> float:
    """The sign-flip test of the paired t over every sign assignment (n <= 16)."""
    n = len(d)
    signs = 1 - 2 * ((np.arange(2**n)[:, None] >> np.arange(n)) & 1)
    flipped = signs * d
    sd = flipped.std(axis=1, ddof=1)
    mean = np.abs(flipped.mean(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(sd > 0, mean / sd, np.where(mean > 0, np.inf, 0.0))
    observed = t[0]  # the identity assignment
    hits = np.isinf(t) if math.isinf(observed) else t >= observed * (1 - 1e-9)
    return float(np.count_nonzero(hits) / len(t))


@dataclass
class Tally:
    old: int = 0
    new: int = 0
    noted: int = 0
    agree: bool = True


def run_cell(cell: Cell, n: int, datasets: int, seed: int) -> Tally:
    from evalq.stats.exchangeable import shape_note
    from evalq.stats.permutation import sign_flip_null, two_sample_null
    from evalq.stats.studentised import welch_null

    rng = np.random.default_rng(seed)
    tally = Tally()
    paired = cell.design == "paired"
    for _ in range(datasets):
        ref, oth = cell.draw(rng, n)
        if paired:
            old = new = sign_flip_null(oth - ref, resamples=RESAMPLES, seed=0).p_value()
            if n <= CHECKED_PAIRS:
                tally.agree &= math.isclose(old, paired_t_p(oth - ref), rel_tol=1e-9)
        else:
            old = two_sample_null(list(oth), list(ref), resamples=RESAMPLES, seed=0).p_value()
            new = welch_null(list(oth), list(ref), resamples=RESAMPLES, seed=0).p_value()
        tally.old += old <= ALPHA
        if new <= ALPHA:
            tally.new += 1
            tally.noted += (
                shape_note(list(ref), list(oth), paired=paired, rejected=True) is not None
            )
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--sizes", default="5,6,7,8,9,10,11,12")
    parser.add_argument("--designs", default="unpaired,paired", help="which designs to run")
    args = parse_args(parser, quick={"datasets": 40, "sizes": "5,8"})
    sizes = [int(s) for s in args.sizes.split(",")]
    print(
        f"{'design':<9} {'cell':<19} {'n':>3} {'old':>6} {'new':>6} {'noted':>6} {'bare':>6}"
        f"  (alpha {ALPHA}; shift cells: rejections and their share noted)"
    )
    worst_old = worst_new = worst_bare = most_noted_shift = 0.0
    least_noted = 1.0
    agree = True
    for index, cell in enumerate(CELLS):
        if cell.design not in args.designs.split(","):
            continue
        for n in sizes:
            tally = run_cell(cell, n, args.datasets, seed=1000 * index + n)
            old, new = tally.old / args.datasets, tally.new / args.datasets
            share = tally.noted / tally.new if tally.new else 1.0
            bare = (tally.new - tally.noted) / args.datasets
            agree &= tally.agree
            if cell.null:
                worst_old, worst_new = max(worst_old, old), max(worst_new, new)
                worst_bare = max(worst_bare, bare)
                if new > ALPHA + 0.01:
                    least_noted = min(least_noted, share)
            else:
                most_noted_shift = max(most_noted_shift, share)
            print(
                f"{cell.design:<9} {cell.name:<19} {n:>3} {old:>6.3f} {new:>6.3f}"
                f" {share:>6.2f} {bare:>6.3f}"
            )
    print("paired: the sign flips of the paired t and of the sum agree on every data set:", agree)
    if not agree:
        raise SystemExit("the paired t's sign flips disagree with the sum's")
    figure("worst false-verdict rate, old (raw mean difference)", worst_old)
    figure("worst false-verdict rate, new (studentised)", worst_new)
    figure("least share noted, cells over alpha + 1%", least_noted)
    figure("most share of true verdicts noted (shift cells)", most_noted_shift)
    ratio("worst rate of false verdicts without the note over alpha", worst_bare / ALPHA)  # last


if __name__ == "__main__":
    main()
