"""How often the interval beside each verdict covers the truth, and how often a verdict is false.

    python bench/interval_coverage.py [--trials 1000] [--resamples 2000] [--sizes 5 .. 12]
                                      [--quick]

Under no difference (both sides drawn from one distribution, so the true mean difference is 0),
for each sample size n (pairs, or runs per side) and each score distribution, draws
``--trials`` data sets and counts:

- ``paired``: two groups over n shared tasks, as `evalq compare` decides one comparison (the
  sign-flip test at 0.05, `evalq.stats.permutation`, and its inverted interval at 95%): the
  share of intervals holding 0 (coverage) and of comparisons rejected (false positives), and
  how often the interval and the verdict disagree (0 by construction: counted, not assumed;
  tests/unit/stats/test_permutation.py checks it through `contrast` for every correction);
- ``unpaired``: the same for n runs a side on one task (the two-sample permutation test);
- ``ladder``: the variant ladder over 4 identical variants of n runs (`evalq.scoring.worth`'s
  `test_pairs`: every pair, Holm): the share of ladders showing "worth it" or "not worth it"
  anywhere (the family's false-positive rate, promised <= 5%), and of pair intervals holding 0;
- ``bootstrap`` (for comparison): the expanded percentile bootstrap interval of the paired mean
  difference that `evalq compare` showed before (coverage only).

Distributions (scores in [0, 1]): ``0-1`` (per-task difficulty Beta(2, 2) plus noise, clipped,
3 decimals), ``pass/fail`` (per-task pass probability in [0.2, 0.8]), ``skewed`` (Beta(0.6, 4):
most runs near 0, a long tail) and ``capped`` (per-task level plus noise, half the values at
the cap 1.0). Runs of the unpaired and ladder cells are drawn from one task's distribution.
The last line is the worst coverage over every cell from n = 5 (target >= 0.93; the permutation
tests are exact, so it is >= 0.95 up to Monte Carlo noise of the trials).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

import numpy as np
from _common import parse_args, ratio

from evalq.scoring.worth import test_pairs
from evalq.stats.comparison import paired_bootstrap_ci
from evalq.stats.permutation import PermutationNull, sign_flip_null, two_sample_null

TARGET = 0.93
ALPHA = 0.05
"""One comparison alone: Holm over one test rejects at alpha, its interval drawn at 95%."""
Pair = tuple[list[float], list[float]]


def zero_one(rng: np.random.Generator, n: int) -> Pair:
    task = rng.beta(2, 2, size=n)
    a, b = (np.clip(task + rng.normal(0, 0.15, n), 0, 1).round(3) for _ in range(2))
    return a.tolist(), b.tolist()


def pass_fail(rng: np.random.Generator, n: int) -> Pair:
    chance = rng.uniform(0.2, 0.8, n)
    a, b = ((rng.random(n) < chance).astype(float) for _ in range(2))
    return a.tolist(), b.tolist()


def skewed(rng: np.random.Generator, n: int) -> Pair:
    scale = rng.uniform(0.5, 1.0, n)
    a, b = ((rng.beta(0.6, 4, n) * scale).round(3) for _ in range(2))
    return a.tolist(), b.tolist()


def capped(rng: np.random.Generator, n: int) -> Pair:
    task = rng.uniform(0.7, 1.1, n)
    a, b = (np.minimum(1.0, task + rng.normal(0, 0.15, n)).round(3) for _ in range(2))
    return a.tolist(), b.tolist()


DISTRIBUTIONS: dict[str, Callable[[np.random.Generator, int], Pair]] = {
    "0-1": zero_one,
    "pass/fail": pass_fail,
    "skewed": skewed,
    "capped": capped,
}


def holds_zero(low: float, high: float) -> bool:
    return low <= 1e-12 and high >= -1e-12


def decided(null: PermutationNull, threshold: float) -> tuple[bool, bool, bool]:
    """(interval holds 0, rejected, they disagree) for one comparison at ``threshold``."""
    low, high = null.interval(threshold, bounds=(-1.0, 1.0))
    rejected = null.p_value() <= threshold
    held = holds_zero(low, high)
    return held, rejected, held == rejected


def task_runs(rng: np.random.Generator, dist: str, n: int) -> list[float]:
    """n runs of one task, drawn as the distribution draws one task's score."""
    if dist == "pass/fail":
        return (rng.random(n) < rng.uniform(0.2, 0.8)).astype(float).tolist()
    if dist == "skewed":
        return (rng.beta(0.6, 4, n) * rng.uniform(0.5, 1.0)).round(3).tolist()
    if dist == "capped":
        return np.minimum(1.0, rng.uniform(0.7, 1.1) + rng.normal(0, 0.15, n)).round(3).tolist()
    return np.clip(rng.beta(2, 2) + rng.normal(0, 0.15, n), 0, 1).round(3).tolist()


def ladder_cell(
    rng: np.random.Generator, dist: str, n: int, resamples: int, seed: int
) -> tuple[bool, int, int]:
    """4 identical variants of n runs, every pair tested and corrected as
    `evalq.scoring.worth.analyse_variants` does (`test_pairs`; the descriptive uplifts left
    out): (any verdict, pair intervals holding 0, pairs)."""
    pooled = task_runs(rng, dist, 4 * n)  # one task's runs, dealt to the four variants
    composites = {f"T{v}": pooled[v * n : (v + 1) * n] for v in range(4)}
    pairs = [(f"T{a}", f"T{b}") for a in range(4) for b in range(a + 1, 4)]
    nulls, found = test_pairs(composites, pairs, alpha=0.05, resamples=resamples, seed=seed)
    held = sum(
        holds_zero(*null.interval(found.threshold, bounds=(-1.0, 1.0)))
        for null in nulls
        if null is not None
    )
    return any(found.rejected), held, len(pairs)


def share(hits: int, trials: int) -> str:
    p = hits / trials
    half = 1.96 * math.sqrt(max(p * (1 - p), 1 / trials) / trials)
    return f"{p:.3f} [{max(0.0, p - half):.3f}-{min(1.0, p + half):.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(range(5, 13)))
    parser.add_argument("--no-ladder", action="store_true", help="skip the variant ladder")
    args = parse_args(parser, quick={"trials": 15, "resamples": 200, "sizes": [5, 6]})
    rng = np.random.default_rng(2026)
    print(
        f"under no difference, {args.trials} data sets per cell, {args.resamples} Monte Carlo "
        "rearrangements where not exact; coverage = share of intervals holding 0, "
        "fp = share of verdicts other than 'no difference' (with 95% normal bounds)"
    )
    worst = 1.0
    disagreements = 0
    head = f"{'n':>3} {'scores':<10}"
    cols = ("paired cover", "paired fp", "unpaired cover", "unpaired fp", "bootstrap cover")
    if not args.no_ladder:
        cols += ("ladder fp (4x n)", "ladder cover")
    print(head + "".join(f"{c:<22}" for c in cols), flush=True)
    for n in args.sizes:
        for dist, draw in DISTRIBUTIONS.items():
            pc = pf = uc = uf = bc = lf = lc = lpairs = 0
            for trial in range(args.trials):
                a, b = draw(rng, n)
                diffs = [x - y for x, y in zip(a, b, strict=True)]
                null = sign_flip_null(diffs, resamples=args.resamples, seed=trial)
                held, rejected, differ = decided(null, ALPHA)
                pc, pf, disagreements = pc + held, pf + rejected, disagreements + differ
                d = paired_bootstrap_ci(a, b, resamples=args.resamples, seed=trial)
                bc += holds_zero(d.low, d.high)
                pooled = task_runs(rng, dist, 2 * n)  # one task's runs, split in two
                null = two_sample_null(pooled[:n], pooled[n:], resamples=args.resamples, seed=trial)
                held, rejected, differ = decided(null, ALPHA)
                uc, uf, disagreements = uc + held, uf + rejected, disagreements + differ
                if not args.no_ladder:
                    any_verdict, held_pairs, pairs = ladder_cell(
                        rng, dist, n, args.resamples, trial
                    )
                    lf, lc, lpairs = lf + any_verdict, lc + held_pairs, lpairs + pairs
            t = args.trials
            cells = [share(pc, t), share(pf, t), share(uc, t), share(uf, t), share(bc, t)]
            worst = min(worst, pc / t, uc / t)
            if not args.no_ladder:
                cells += [share(lf, t), f"{lc / lpairs:.3f}"]
                worst = min(worst, lc / lpairs)
            print(f"{n:>3} {dist:<10}" + "".join(f"{c:<22}" for c in cells), flush=True)
    print(f"interval and verdict disagreed in {disagreements} comparisons (0 by construction)")
    ratio(f"worst coverage of an interval beside a verdict, n >= 5 (target >= {TARGET})", worst)


if __name__ == "__main__":
    main()
