"""How often each "95%" interval evalq shows covers the truth at a few pairs or runs.

    python bench/interval_coverage.py [--trials 1000] [--resamples 2000] [--sizes 2 3 ..] [--quick]

Under no difference (both sides drawn from one distribution, so the true mean difference,
Cliff's delta and uplift are all 0), for each sample size n (pairs, or runs per side) and each
score distribution, draws ``--trials`` data sets and counts how often each interval holds 0:

- ``paired mean``: `paired_bootstrap_ci`, the mean difference `evalq compare` shows (paired);
- ``paired cliff``: `cliffs_delta(paired=True)`, the effect size beside it;
- ``unpaired mean`` / ``unpaired cliff``: the fallback where nothing pairs (n runs per side);
- ``uplift median`` / ``uplift mean``: `bootstrap_uplift`, the variant analysis's composite
  (median) and pass-rate (mean) uplifts, n runs per variant.

Distributions: ``0-1`` (per-task difficulty Beta(2, 2) plus noise, clipped, 3 decimals),
``pass/fail`` (per-task pass probability in [0.2, 0.8]) and ``levels`` (rubric levels 0, 1/4,
.., 1: many ties). The pass-rate uplift is measured on pass/fail only (it is a mean of 0/1).
The minimum n printed is the smallest n from which every interval covers >= 0.93 in every
distribution (`evalq.stats.contrast.MIN_PAIRS` is set from it). The last line is the worst
coverage at that minimum.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
from _common import parse_args, ratio

from evalq.stats.bootstrap import bootstrap_uplift
from evalq.stats.comparison import bootstrap_mean_difference, cliffs_delta, paired_bootstrap_ci
from evalq.stats.contrast import MIN_PAIRS

TARGET = 0.93
Pair = tuple[list[float], list[float]]


def zero_one(rng: np.random.Generator, n: int) -> Pair:
    task = rng.beta(2, 2, size=n)
    a, b = (np.clip(task + rng.normal(0, 0.15, n), 0, 1).round(3) for _ in range(2))
    return a.tolist(), b.tolist()


def pass_fail(rng: np.random.Generator, n: int) -> Pair:
    chance = rng.uniform(0.2, 0.8, n)
    a, b = ((rng.random(n) < chance).astype(float) for _ in range(2))
    return a.tolist(), b.tolist()


def levels(rng: np.random.Generator, n: int) -> Pair:
    task = rng.integers(0, 5, n)
    a, b = (np.clip(task + rng.integers(-1, 2, n), 0, 4) / 4 for _ in range(2))
    return a.tolist(), b.tolist()


DISTRIBUTIONS: dict[str, Callable[[np.random.Generator, int], Pair]] = {
    "0-1": zero_one,
    "pass/fail": pass_fail,
    "levels": levels,
}


def holds_zero(low: float | None, high: float | None) -> bool:
    # A resampled mean of equal values can miss 0 by a rounding error.
    return low is not None and high is not None and low <= 1e-9 and high >= -1e-9


def covered(name: str, a: list[float], b: list[float], resamples: int, seed: int) -> bool:
    if name == "paired mean":
        d = paired_bootstrap_ci(a, b, resamples=resamples, seed=seed)
        return holds_zero(d.low, d.high)
    if name == "paired cliff":
        e = cliffs_delta(a, b, resamples=resamples, seed=seed, paired=True)
        return holds_zero(e.low, e.high)
    if name == "unpaired mean":
        d = bootstrap_mean_difference(a, b, resamples=resamples, seed=seed)
        return holds_zero(d.low, d.high)
    if name == "unpaired cliff":
        e = cliffs_delta(a, b, resamples=resamples, seed=seed)
        return holds_zero(e.low, e.high)
    statistic = "median" if name == "uplift median" else "mean"
    u = bootstrap_uplift(a, b, resamples=resamples, seed=seed, statistic=statistic)
    # An uplift over a baseline of 0 is undefined: evalq shows no interval (nothing claimed).
    return u.uplift is None or u.low is None or holds_zero(u.low, u.high)


INTERVALS = (
    "paired mean",
    "paired cliff",
    "unpaired mean",
    "unpaired cliff",
    "uplift median",
    "uplift mean",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(range(2, 13)))
    args = parse_args(parser, quick={"trials": 20, "resamples": 200, "sizes": [2, 5]})
    rng = np.random.default_rng(2026)
    rows: dict[tuple[str, str], dict[int, float]] = {}
    print(f"coverage of nominal 95% under no difference, {args.trials} trials per cell")
    for n in args.sizes:
        for dist, draw in DISTRIBUTIONS.items():
            for interval in INTERVALS:
                if interval == "uplift mean" and dist != "pass/fail":
                    continue
                hits = 0
                for trial in range(args.trials):
                    a, b = draw(rng, n)
                    if interval.startswith(("unpaired", "uplift")):
                        b = draw(rng, n)[1]  # independent samples: another draw's values
                    hits += covered(interval, a, b, args.resamples, trial)
                rows.setdefault((interval, dist), {})[n] = hits / args.trials
        worst_cell = min(rows, key=lambda key: rows[key][n])
        print(f"n={n}: worst {rows[worst_cell][n]:.3f} ({' / '.join(worst_cell)})", flush=True)
    print(f"{'interval':<16}{'scores':<11}" + "".join(f"n={n:<5}" for n in args.sizes))
    for (interval, dist), by_n in rows.items():
        print(f"{interval:<16}{dist:<11}" + "".join(f"{by_n[n]:<7.3f}" for n in args.sizes))
    worst = {n: min(by_n[n] for by_n in rows.values()) for n in args.sizes}
    enough = [n for n in args.sizes if all(worst[m] >= TARGET for m in args.sizes if m >= n)]
    minimum = min(enough) if enough else None
    print(f"worst coverage by n: {', '.join(f'{n}: {worst[n]:.3f}' for n in args.sizes)}")
    print(f"smallest n from which every interval covers >= {TARGET}: {minimum}")
    print(f"evalq's MIN_PAIRS: {MIN_PAIRS}")
    shown = MIN_PAIRS if MIN_PAIRS in worst else min(args.sizes, key=lambda n: abs(n - MIN_PAIRS))
    ratio(f"worst coverage at n={shown} (target >= {TARGET})", worst[shown])


if __name__ == "__main__":
    main()
