"""The comparison statistics against the straightforward way of computing them, side by side.

    python bench/statistics_speed.py [--resamples 1000] [--units 500] [--quick]

Three pairs, each timed in this one run, each pair checked to give the same numbers:

1. a suite board's rank-interval resamples: re-scoring renamed copies of the resampled scenarios
   with `suite_metrics` (the first implementation) against aggregating each scenario's facts,
   computed once (`scenario_facts` + `aggregate`), over the bundled suite example's 4 runs;
2. Cliff's delta: the pairwise sign matrix (O(n m)) against counting by sorting, ``--units``
   values per side, 50 resamples;
3. the uplift bootstrap: a Python loop of `random.Random` draws and `summarize` against numpy,
   2,000 resamples of 10 runs each (numbers differ by the generator; only time is compared).

The last line gives the three ratios (straightforward / evalq).
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np
from _common import parse_args  # also puts the repository on sys.path

from evalq.core.profile import SuiteProfile
from evalq.core.schemas import ScenarioResult
from evalq.producer.cli import EXAMPLES
from evalq.producer.files import read_jsonl
from evalq.scoring.suite.aggregate import aggregate, scenario_facts, suite_metrics
from evalq.scoring.suite.score import final_score
from evalq.stats.bootstrap import bootstrap_uplift, quantile
from evalq.stats.comparison import _cliffs_delta
from evalq.stats.statistics import summarize

T = TypeVar("T")


def timed(work: Callable[[], T]) -> tuple[float, T]:
    start = time.perf_counter()
    result = work()
    return time.perf_counter() - start, result


def renamed(scenarios: Sequence[ScenarioResult]) -> list[ScenarioResult]:
    """The first implementation's way to let a scenario appear twice: rename the repeats."""
    seen: dict[str, int] = {}
    out = []
    for s in scenarios:
        count = seen[s.id] = seen.get(s.id, 0) + 1
        out.append(s if count == 1 else s.model_copy(update={"id": f"{s.id}#{count}"}))
    return out


def suite_pair(resamples: int) -> float:
    profile = SuiteProfile()
    good, _ = read_jsonl(EXAMPLES / "suite.jsonl")
    runs = [list(sub.scenarios or []) for _, sub in good]
    rng = random.Random(0)
    draws = [[rng.choices(range(len(run)), k=len(run)) for run in runs] for _ in range(resamples)]

    def straightforward() -> list[float | None]:
        return [
            final_score(suite_metrics(renamed([run[i] for i in picks]), profile), profile).value
            for draw in draws
            for run, picks in zip(runs, draw, strict=True)
        ]

    def evalq() -> list[float | None]:
        facts = [[scenario_facts(s, profile) for s in run] for run in runs]
        return [
            final_score(aggregate([f[i] for i in picks], profile), profile).value
            for draw in draws
            for f, picks in zip(facts, draw, strict=True)
        ]

    slow, expected = timed(straightforward)
    fast, found = timed(evalq)
    assert found == expected, "the two ways disagree"
    count = resamples * len(runs)
    print(
        f"suite resamples: {count} final scores ({len(runs)} runs x {resamples}); "
        f"renamed copies + suite_metrics {slow:.3f} s, scenario facts + aggregate {fast:.3f} s "
        f"({1e6 * fast / count:.0f} us each); equal"
    )
    return slow / fast


def cliffs_pair(units: int, resamples: int = 50) -> float:
    rng = np.random.default_rng(1)
    x, y = rng.integers(0, 20, units).astype(float), rng.integers(0, 20, units).astype(float)
    picks = [
        (rng.integers(0, units, units), rng.integers(0, units, units)) for _ in range(resamples)
    ]

    def matrix() -> list[float]:
        return [float(np.sign(x[i][:, None] - y[j][None, :]).sum()) / units**2 for i, j in picks]

    def sorted_counts() -> list[float]:
        return [_cliffs_delta(x[i], y[j]) for i, j in picks]

    slow, expected = timed(matrix)
    fast, found = timed(sorted_counts)
    assert np.allclose(found, expected), "the two ways disagree"
    print(
        f"Cliff's delta: {len(picks)} resamples of {units} x {units} values (many ties); "
        f"sign matrix {slow:.3f} s, sorting {fast:.3f} s; equal"
    )
    return slow / fast


def uplift_pair() -> float:
    variant = [0.89, 0.91, 0.38, 0.9, 0.85, 0.88, 0.91, 0.4, 0.84, 0.89]
    baseline = [0.36, 0.85, 0.8, 0.36, 0.72, 0.69, 0.38, 0.83, 0.36, 0.86]

    def loop() -> tuple[float, float]:
        rng = random.Random(0)
        base = summarize(baseline).median
        drawn = []
        for _ in range(2000):
            after = summarize(rng.choices(variant, k=10)).median
            before = summarize(rng.choices(baseline, k=10)).median
            if before:
                drawn.append((after - before) / before)
        drawn.sort()
        assert base
        return quantile(drawn, 0.025), quantile(drawn, 0.975)

    slow, old = timed(loop)
    fast, new = timed(lambda: bootstrap_uplift(variant, baseline))
    print(
        f"uplift bootstrap (2000 resamples of 10 runs): Python loop {slow:.3f} s, "
        f"numpy {fast:.4f} s; intervals {old[0]:+.3f}..{old[1]:+.3f} vs "
        f"{new.low or 0:+.3f}..{new.high or 0:+.3f} (different generators)"
    )
    return slow / fast


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--units", type=int, default=500)
    args = parse_args(parser, quick={"resamples": 50, "units": 50})
    suite = suite_pair(args.resamples)
    cliffs = cliffs_pair(args.units)
    uplift = uplift_pair()
    print(
        f"ratio (straightforward / evalq): suite resamples {suite:.1f}x, "
        f"Cliff's delta {cliffs:.1f}x, uplift bootstrap {uplift:.1f}x"
    )


if __name__ == "__main__":
    main()
