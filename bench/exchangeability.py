"""False verdicts when the permutation test's exchangeability fails: equal means, different
shapes or spreads.

For each n (runs a side, or pairs) and each design, draws data sets whose two sides have the
same mean but different shapes (one side normal with sd 0.05, the other a shifted exponential
with sd 0.2, both of mean 0.5) and counts how often evalq's test rejects at alpha 0.05: the
two-sample permutation test of the mean difference (unpaired) and the sign-flip test (paired),
and, beside them, a studentised version of each (the same rearrangements of Welch's t, or of
the paired t: Janssen 1997; Chung and Romano 2013), which is asymptotically valid without
exchangeability; and how often the note beside a verdict (`evalq.stats.exchangeable.shape_note`)
is there when the verdict is false ("noted"), and how often it is there on data of one shape
(both sides normal with sd 0.1, equal means: "note on one shape"). ``--quick``: n = 5 and 8, 40
data sets a cell.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from _common import figure, parse_args, ratio

ALPHA = 0.05


def _welch(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Welch's t of each row split (x rows, y rows)."""
    vx, vy = x.var(axis=-1, ddof=1), y.var(axis=-1, ddof=1)
    se = np.sqrt(vx / x.shape[-1] + vy / y.shape[-1])
    return np.abs(x.mean(axis=-1) - y.mean(axis=-1)) / np.where(se > 0, se, np.inf)


def studentised_two_sample(x: np.ndarray, y: np.ndarray, rng: np.random.Generator, b: int) -> float:
    pooled = np.concatenate([x, y])
    n = len(x)
    order = np.argsort(rng.random((b, len(pooled))), axis=1)
    shuffled = pooled[order]
    hits = np.sum(_welch(shuffled[:, :n], shuffled[:, n:]) >= _welch(x, y) - 1e-12)
    return float((1 + hits) / (1 + b))


def studentised_sign_flip(d: np.ndarray, rng: np.random.Generator, b: int) -> float:
    def t(values: np.ndarray) -> np.ndarray:
        sd = values.std(axis=-1, ddof=1)
        return np.abs(values.mean(axis=-1)) / np.where(
            sd > 0, sd / math.sqrt(values.shape[-1]), np.inf
        )

    signs = 1 - 2 * rng.integers(0, 2, size=(b, len(d)))
    hits = np.sum(t(signs * d) >= t(d) - 1e-12)
    return float((1 + hits) / (1 + b))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--sizes", default="5,6,7,8,9,10,11,12")
    parser.add_argument("--resamples", type=int, default=2000)
    args = parse_args(parser, quick={"datasets": 40, "sizes": "5,8", "resamples": 400})
    from evalq.stats.comparison import paired_permutation_test, two_sample_permutation_test
    from evalq.stats.exchangeable import shape_note

    rng = np.random.default_rng(0)
    worst_plain, worst_student, least_noted, most_honest = 0.0, 0.0, 1.0, 0.0
    print(
        f"{'design':<9} {'n':>3} {'permutation':>12} {'studentised':>12} {'noted':>6}"
        f" {'note on one shape':>18}  (alpha {ALPHA})"
    )
    for design in ("unpaired", "paired"):
        for n in (int(s) for s in args.sizes.split(",")):
            plain = student = noted = honest = 0
            for _ in range(args.datasets):
                same_x, same_y = rng.normal(0.5, 0.1, n), rng.normal(0.5, 0.1, n)
                paired = design == "paired"
                honest += shape_note(list(same_x), list(same_y), paired=paired) is not None
                x = rng.normal(0.5, 0.05, n)
                y = 0.3 + rng.exponential(0.2, n)  # mean 0.5, sd 0.2, right-skewed
                if design == "unpaired":
                    p = two_sample_permutation_test(
                        list(x), list(y), resamples=args.resamples
                    ).p_value
                    q = studentised_two_sample(x, y, rng, args.resamples)
                else:
                    p = paired_permutation_test(list(x), list(y), resamples=args.resamples).p_value
                    q = studentised_sign_flip(x - y, rng, args.resamples)
                plain += p <= ALPHA
                student += q <= ALPHA
                note = shape_note(list(x), list(y), paired=paired)
                noted += p <= ALPHA and note is not None
            a, b = plain / args.datasets, student / args.datasets
            share = noted / plain if plain else 1.0
            worst_plain, worst_student = max(worst_plain, a), max(worst_student, b)
            least_noted = min(least_noted, share)
            most_honest = max(most_honest, honest / args.datasets)
            print(
                f"{design:<9} {n:>3} {a:>12.3f} {b:>12.3f} {share:>6.2f}"
                f" {honest / args.datasets:>18.3f}"
            )
    figure("worst false-verdict rate, permutation test", worst_plain)
    figure("worst false-verdict rate, studentised", worst_student)
    figure("least share of false verdicts carrying the note", least_noted)
    figure("most often the note on data of one shape", most_honest)
    ratio("worst false-verdict rate over alpha, permutation test", worst_plain / ALPHA)  # last


if __name__ == "__main__":
    main()
