"""How often changing the seed changes a variant verdict or a rank interval, and at what cost.

    python bench/seed_stability.py [--seeds 200] [--quick]

On the bundled Scylla example (examples/evalq_examples/scylla.py: ten runs of each of T0-T3;
cost priced here at 3 / 15 USD per million input / output tokens, close to the demo's profile),
for each of ``--seeds`` seeds and each number of resamples:

- the variant analysis (`analyse_variants`): every step's verdict (over the baseline and
  between neighbours);
- the variant board's rank intervals (`variant_uncertainty`'s rows through `rank_intervals`).

A seed "changes" a result when it differs from the result most seeds give (the mode). Printed:
the share of seeds that change a verdict, a rank interval, and the time per analysis, at
evalq's default resamples and at ten times as many, side by side; and the rank intervals as evalq
draws them (1,000 resamples, 10,000 when an interval's edge is undecided). The last line is the
share of seeds changing a verdict or an interval as evalq computes them (target <= 0.01).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Callable, Hashable, Sequence

from _common import ROOT, parse_args, ratio

from evalq.core.profile import ScyllaProfile
from evalq.core.results import ScyllaScores
from evalq.read.rank_uncertainty import variant_key
from evalq.scoring.scylla import score_scylla_run
from evalq.scoring.worth import analyse_variants
from evalq.stats import bootstrap, rank_interval
from evalq.stats.rank_interval import RankedRow, rank_intervals

sys.path.insert(0, str(ROOT / "examples"))
from evalq_examples.scylla import submissions

PROFILE = ScyllaProfile()


def example_runs() -> dict[str, list[ScyllaScores]]:
    runs: dict[str, list[ScyllaScores]] = {}
    for s in submissions():
        usage = s["usage"]
        cost = (usage["input_tokens"] * 3 + usage["output_tokens"] * 15) / 1_000_000
        runs.setdefault(s["variant"], []).append(
            score_scylla_run(
                passed=s["passed"],
                impl_rate=s["impl_rate"],
                cost_usd=cost,
                duration_seconds=usage["execution_time"],
                profile=PROFILE,
            )
        )
    return runs


def verdicts(runs: dict[str, list[ScyllaScores]], seed: int, resamples: int) -> Hashable:
    analysis = analyse_variants(runs, PROFILE, seed=seed, resamples=resamples)
    return tuple(
        (t.source, t.target, t.verdict) for t in analysis.over_baseline + analysis.transitions
    )


def ranks(runs: dict[str, list[ScyllaScores]], seed: int, resamples: int) -> Hashable:
    """Rank intervals drawn with exactly ``resamples`` resamples (no escalation)."""
    return _ranks(runs, seed, resamples, escalate=False)


def escalating(runs: dict[str, list[ScyllaScores]], seed: int, resamples: int) -> Hashable:
    """Rank intervals as evalq draws them: ``resamples`` first, ten times as many when an edge
    is undecided (`evalq.stats.rank_interval.undecided`)."""
    return _ranks(runs, seed, resamples, escalate=True)


def _ranks(
    runs: dict[str, list[ScyllaScores]], seed: int, resamples: int, *, escalate: bool
) -> Hashable:
    composites = [[r.composite for r in variant] for variant in runs.values()]
    rows = [RankedRow(variant_key(c), c, variant_key) for c in composites]
    result = rank_intervals(rows, unit="run", seed=seed, resamples=resamples, escalate=escalate)
    return tuple(
        None if r.interval is None else (r.interval.low, r.interval.high) for r in result.rows
    )


def changed(
    figure: Callable[[dict[str, list[ScyllaScores]], int, int], Hashable],
    runs: dict[str, list[ScyllaScores]],
    seeds: int,
    resamples: int,
) -> tuple[float, float, Counter[Hashable]]:
    """(share of seeds whose result is not the mode, seconds per call, the results' counts)."""
    start = time.perf_counter()
    results: Sequence[Hashable] = [figure(runs, seed, resamples) for seed in range(seeds)]
    seconds = (time.perf_counter() - start) / seeds
    counts = Counter(results)
    mode = counts.most_common(1)[0][1]
    return (seeds - mode) / seeds, seconds, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200)
    args = parse_args(parser, quick={"seeds": 3})
    runs = example_runs()
    print(f"bundled Scylla example, {args.seeds} seeds; a change = a result other than the mode")
    at_defaults = 0.0
    for name, figure, sizes, default in (
        ("verdicts", verdicts, (bootstrap.RESAMPLES, bootstrap.RESAMPLES * 10), True),
        ("rank intervals", ranks, (rank_interval.RESAMPLES, rank_interval.RESAMPLES * 10), False),
        ("rank intervals, escalating (evalq)", escalating, (rank_interval.RESAMPLES,), True),
    ):
        for resamples in sizes:
            share, seconds, counts = changed(figure, runs, args.seeds, resamples)
            print(
                f"{name:<35} {resamples:>6} resamples: {share:6.1%} of seeds change it, "
                f"{seconds * 1000:8.1f} ms per analysis, {len(counts)} distinct results"
            )
            if default and resamples == sizes[0]:
                at_defaults = max(at_defaults, share)
                print(f"  mode: {counts.most_common(1)[0][0]}")
    ratio("seeds changing a verdict or rank interval at the defaults (target <= 0.01)", at_defaults)


if __name__ == "__main__":
    main()
