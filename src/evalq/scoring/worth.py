"""Is a variant worth it? A verdict per pair of variants, one test, and uplifts to read.

Spec 003 measures a variant (T1, T2, ...) by its uplift over T0. This module completes that
analysis the way a reader needs it to decide:

- **the verdict** on every pair of variants (the earlier one the source): the two-sample
  permutation test of Welch's t of the difference of their runs' mean composites
  (`evalq.stats.studentised`, composites at the 4 decimals a board shows), the very test
  `evalq compare --by variant` decides with; **worth it** when it rejects and the later
  variant's mean is higher, **not worth it** when it rejects and it is lower, **inconclusive**
  otherwise. The interval shown beside the verdict is that test inverted, so it excludes 0
  exactly when the verdict is not inconclusive;
- **the family**: every pair's test is corrected together (Holm by default), so a ladder of
  identical variants shows any verdict at most ``alpha`` of the time; the intervals are drawn
  at ``1 - t``, ``t`` the raw p-value threshold the correction judged the family at. A pair
  where either side has fewer than `MIN_RUNS` composites is not tested: "inconclusive", with
  the words "too few runs to compare";
- **the uplifts**, which decide nothing: spec 003's uplift of the median composite, of the
  pass rate (its mean: a median of pass/fail runs is only 0 or 1), the implementation rate
  (median) and the cost (median; negative = cheaper), each with a percentile bootstrap interval
  at the analysis's level (`evalq.stats.bootstrap`). The median's uplift can hold 0 while the
  mean difference's test rejects, or the reverse (a median of bimodal pass/fail runs jumps
  between the modes): the verdict is the test's; the cost's interval is named in the reason,
  never folded into the verdict;
- **the note a rejection carries** where the test cannot vouch for it: too few runs a side to
  see whether the two sides share a shape, or sides that differ in shape
  (`evalq.stats.exchangeable.shape_note`, the note `evalq compare` shows beside the same test),
  appended to the reason of a "worth it" or "not worth it".

Every pair is served (`VariantAnalysis.pairs`): over the baseline (spec 003's uplift) and
between neighbours (T0 -> T1, T1 -> T2, ...) are views of it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from evalq.core.profile import ScyllaProfile
from evalq.core.results import ScyllaScores
from evalq.scoring.variants import VariantReport, VariantStats, compare_variants
from evalq.stats.bootstrap import RESAMPLES, SEED, Statistic, UpliftInterval, bootstrap_uplift
from evalq.stats.comparison import Corrected, Correction, PairedDifference, correct
from evalq.stats.contrast import INTERVAL, MIN_PAIRS
from evalq.stats.exchangeable import shape_note
from evalq.stats.studentised import UnpairedNull, welch_null

Metric = Literal["composite", "pass_rate", "impl_rate", "cost_usd"]
Verdict = Literal["worth it", "not worth it", "inconclusive"]

METRICS: dict[Metric, Statistic] = {
    "composite": "median",
    "pass_rate": "mean",
    "impl_rate": "median",
    "cost_usd": "median",
}
"""The metrics whose uplift is measured, each with the statistic compared."""

MIN_RUNS = MIN_PAIRS
"""Fewest composites per side for a pair's test and verdict (the same rule as an unpaired
comparison's: `evalq.stats.contrast.MIN_PAIRS`)."""
DECIMALS = 4
"""Composites are tested at the decimals a board shows (as `evalq.read.compare` reads them)."""


@dataclass(frozen=True)
class Transition:
    """One step from a variant to the next in natural order.

    Attributes:
        source / target: the two variants (``target`` follows ``source``).
        uplift: metric -> the uplift of ``target`` over ``source`` with its interval; a metric
            either side never reported is left out.
        cost_of_pass_delta: ``target``'s cost of pass minus ``source``'s (dollars); None when
            either is unknown or infinite (a variant that never passes).
        verdict: the permutation test's (module docstring).
        reason: the verdict in words, with the cost's interval.
        difference: ``target``'s mean composite minus ``source``'s with the inverted test's
            interval (the one beside the verdict); None when too few runs.
        p_value / adjusted_p: the test's p-value, and after the family's correction.
    """

    source: str
    target: str
    uplift: dict[Metric, UpliftInterval]
    cost_of_pass_delta: float | None
    verdict: Verdict
    reason: str
    difference: PairedDifference | None = None
    p_value: float | None = None
    adjusted_p: float | None = None


def _values(runs: Sequence[ScyllaScores], metric: Metric) -> list[float]:
    return [v for v in (getattr(r, metric) for r in runs) if v is not None]


def metric_uplifts(
    target: Sequence[ScyllaScores],
    source: Sequence[ScyllaScores],
    *,
    level: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> dict[Metric, UpliftInterval]:
    """The uplift of each metric of ``target``'s runs over ``source``'s, with its interval.

    A metric that either side has no value for is left out. Every interval is drawn with the
    same ``seed``, so each is reproducible on its own.
    """
    uplifts: dict[Metric, UpliftInterval] = {}
    for metric, statistic in METRICS.items():
        after, before = _values(target, metric), _values(source, metric)
        if after and before:
            uplifts[metric] = bootstrap_uplift(
                after, before, level=level, resamples=resamples, seed=seed, statistic=statistic
            )
    return uplifts


def _percent(interval: UpliftInterval) -> str:
    if interval.low is None or interval.high is None:
        return "no interval"
    return f"[{interval.low:+.1%}, {interval.high:+.1%}]"


def _cost_words(uplift: Mapping[Metric, UpliftInterval]) -> str:
    cost = uplift.get("cost_usd")
    if cost is None or cost.uplift is None:
        return "cost unknown"
    if cost.excludes_zero:
        change = "cheaper" if (cost.high or 0.0) < 0 else "dearer"
        return f"{change}: cost {cost.uplift:+.1%} {_percent(cost)}"
    return f"no clear cost change: {cost.uplift:+.1%} {_percent(cost)}"


def verdict(
    difference: PairedDifference | None,
    rejected: bool,
    uplift: Mapping[Metric, UpliftInterval],
    adjusted_p: float | None = None,
) -> tuple[Verdict, str]:
    """The verdict of a pair's test and the reason in words (module docstring)."""
    cost = _cost_words(uplift)
    if difference is None:
        return "inconclusive", f"no test; {cost}"
    shown = (
        f"mean composite {difference.mean_difference:+.4f} "
        f"[{difference.low:+.4f}, {difference.high:+.4f}]"
    )
    level = f"{difference.level:.2%}"
    p = "" if adjusted_p is None else f", adjusted p = {adjusted_p:.3g}"
    median = uplift.get("composite")
    if median is not None and median.excludes_zero != rejected:
        cost += (
            "; the median's uplift interval "
            + ("excludes" if median.excludes_zero else "holds")
            + " zero, but it decides nothing (a median of runs that pass or fail jumps "
            "between the two modes; the verdict is the mean difference's test)"
        )
    if rejected and difference.mean_difference > 0:
        return "worth it", f"{shown}: the {level} interval is above zero{p}; {cost}"
    if rejected and difference.mean_difference < 0:
        return "not worth it", f"{shown}: the {level} interval is below zero{p}; {cost}"
    return "inconclusive", f"{shown}: the {level} interval includes zero{p}; {cost}"


def _cost_of_pass_delta(source: VariantStats, target: VariantStats) -> float | None:
    before, after = source.cost_of_pass, target.cost_of_pass
    if before is None or after is None or math.isinf(before) or math.isinf(after):
        return None
    return after - before


def _composites(runs: Sequence[ScyllaScores]) -> list[float]:
    return [round(v, DECIMALS) for v in _values(runs, "composite")]


def test_pairs(
    composites: Mapping[str, Sequence[float]],
    pairs: Sequence[tuple[str, str]],
    *,
    alpha: float,
    correction: Correction = "holm",
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> tuple[list[UnpairedNull | None], Corrected]:
    """The test of each pair (source, target) of ``composites`` (None under `MIN_RUNS` a side)
    and the family's correction (its ``threshold`` draws the intervals)."""
    nulls: list[UnpairedNull | None] = []
    for source, target in pairs:
        after, before = composites[target], composites[source]
        enough = min(len(after), len(before)) >= MIN_RUNS
        nulls.append(welch_null(after, before, resamples=resamples, seed=seed) if enough else None)
    tested = [null.p_value() for null in nulls if null is not None]
    return nulls, correct(tested, correction=correction, alpha=alpha)


def judge_pairs(
    pairs: Sequence[tuple[VariantStats, VariantStats]],
    runs_by_variant: Mapping[str, Sequence[ScyllaScores]],
    *,
    level: float = 0.95,
    alpha: float | None = None,
    correction: Correction = "holm",
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> tuple[list[Transition], float, int]:
    """Each pair (source, target) tested and corrected as one family; returns the pairs'
    transitions, the level their intervals were drawn at and how many tests the family had."""
    alpha = round(1 - level, 12) if alpha is None else alpha
    composites = {v: _composites(runs) for v, runs in runs_by_variant.items()}
    named = [(source.variant, target.variant) for source, target in pairs]
    nulls, decided = test_pairs(
        composites, named, alpha=alpha, correction=correction, resamples=resamples, seed=seed
    )
    tested = [null.p_value() for null in nulls if null is not None]
    outcomes = iter(zip(tested, decided.adjusted, decided.rejected, strict=True))
    found = []
    for (source, target), null in zip(pairs, nulls, strict=True):
        uplift = metric_uplifts(
            runs_by_variant[target.variant],
            runs_by_variant[source.variant],
            level=level,
            resamples=resamples,
            seed=seed,
        )
        delta = _cost_of_pass_delta(source, target)
        if null is None:
            sizes = [
                len(_values(runs_by_variant[v.variant], "composite")) for v in (source, target)
            ]
            reason = f"too few runs to compare (n={sizes[0]} and {sizes[1]}; at least {MIN_RUNS})"
            found.append(
                Transition(source.variant, target.variant, uplift, delta, "inconclusive", reason)
            )
            continue
        p, adjusted, rejected = next(outcomes)
        low, high = null.interval(decided.threshold, bounds=(-1.0, 1.0))
        difference = PairedDifference(
            null.estimate, low, high, 1 - decided.threshold, resamples, seed, 0, INTERVAL
        )
        decided_as, reason = verdict(difference, rejected, uplift, adjusted)
        note = shape_note(
            composites[source.variant], composites[target.variant], paired=False, rejected=rejected
        )
        if note is not None:
            reason = f"{reason}; {note}"
        found.append(
            Transition(
                source.variant,
                target.variant,
                uplift,
                delta,
                decided_as,
                reason,
                difference,
                p,
                adjusted,
            )
        )
    return found, 1 - decided.threshold, len(tested)


@dataclass(frozen=True)
class VariantAnalysis:
    """Spec 003's variant report completed: uplifts with intervals and a verdict per step.

    Attributes:
        report: the per-variant statistics and cross-variant figures (`compare_variants`).
        over_baseline: the step from the baseline variant to every other variant, in natural
            order (spec 003's uplift, with intervals and a verdict); empty without a baseline.
        transitions: the steps between neighbouring variants (T0 -> T1, T1 -> T2, ...).
        level / resamples / seed: how every interval was drawn (``level``: the uplifts').
        steps: the tests judged together (every pair with enough runs: the family).
        step_level: the level the intervals beside the verdicts are drawn at, ``1 - t`` with
            ``t`` the raw p-value threshold the correction judged the family at.
        pairs: every pair of variants, the earlier one the source (natural order).
        correction / alpha: the family's correction and level.
        best_value_share: the share of bootstrap resamples (each variant's runs drawn with
            replacement) in which ``report.best_value`` is still the cheapest cost of pass;
            None without a best value (`best_value_share`).
    """

    report: VariantReport
    over_baseline: tuple[Transition, ...]
    transitions: tuple[Transition, ...]
    level: float
    resamples: int
    seed: int
    steps: int = 1
    step_level: float = 0.95
    best_value_share: float | None = None
    pairs: tuple[Transition, ...] = ()
    correction: Correction = "holm"
    alpha: float = 0.05

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: the report's keys, then the intervals, steps and method."""
        return {
            **self.report.to_dict(),
            "over_baseline": [asdict(t) for t in self.over_baseline],
            "transitions": [asdict(t) for t in self.transitions],
            "pairs": [asdict(t) for t in self.pairs],
            "bootstrap": {
                "level": self.level,
                "resamples": self.resamples,
                "seed": self.seed,
                "steps": self.steps,
                "step_level": self.step_level,
                "correction": self.correction,
                "alpha": self.alpha,
            },
            "best_value_share": self.best_value_share,
        }


def best_value_share(
    runs_by_variant: Mapping[str, Sequence[ScyllaScores]],
    best: str | None,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> float | None:
    """How often ``best`` keeps the lowest finite cost of pass when each variant's runs are
    resampled with replacement: the share of ``resamples`` draws (seeded) in which it does.

    A variant's cost of pass in a draw is as `variant_stats` computes it (total cost / passes
    of its costed runs; infinite without a pass); a draw in which no variant passes counts
    against ``best``. On an exact tie the earlier variant wins, as for the observed frontier.
    """
    if best is None:
        return None
    import numpy as np

    rng = np.random.default_rng(seed)
    names = [n for n in runs_by_variant if n == best or runs_by_variant[n]]
    drawn = []
    for name in names:
        costed = [
            r for r in runs_by_variant[name] if r.cost_usd is not None and r.pass_rate is not None
        ]
        if not costed:
            drawn.append(np.full(resamples, np.inf))
            continue
        cost = np.asarray([r.cost_usd for r in costed], dtype=float)
        passes = np.asarray([r.pass_rate for r in costed], dtype=float)
        picks = rng.integers(0, len(costed), size=(resamples, len(costed)))
        total, passed = cost[picks].sum(axis=1), passes[picks].sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            drawn.append(np.where(passed > 0, total / np.where(passed > 0, passed, 1), np.inf))
    table = np.vstack(drawn)
    winner = table.argmin(axis=0)
    held = (winner == names.index(best)) & np.isfinite(table.min(axis=0))
    return float(held.mean())


def analyse_variants(
    runs_by_variant: Mapping[str, Sequence[ScyllaScores]],
    profile: ScyllaProfile,
    *,
    level: float = 0.95,
    alpha: float | None = None,
    correction: Correction = "holm",
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> VariantAnalysis:
    """The complete variant analysis of a task's runs (each variant at least one run).

    ``alpha`` (default ``1 - level``) and ``correction`` judge every pair as one family.
    """
    report = compare_variants(runs_by_variant, profile)
    by_name = {v.variant: v for v in report.variants}
    base = by_name.get(report.baseline) if report.baseline else None
    pairs = [(a, b) for i, a in enumerate(report.variants) for b in report.variants[i + 1 :]]
    alpha = round(1 - level, 12) if alpha is None else alpha
    judged, step_level, tests = judge_pairs(
        pairs,
        runs_by_variant,
        level=level,
        alpha=alpha,
        correction=correction,
        resamples=resamples,
        seed=seed,
    )
    found = {(t.source, t.target): t for t in judged}
    # the baseline first when the names do not put it there: its steps read from it
    over_baseline = tuple(
        found.get((base.variant, v.variant)) or _reversed(found[(v.variant, base.variant)])
        for v in report.variants
        if base and v is not base
    )
    steps = tuple(
        found[(a.variant, b.variant)]
        for a, b in zip(report.variants, report.variants[1:], strict=False)
    )
    share = best_value_share(runs_by_variant, report.best_value, resamples=resamples, seed=seed)
    return VariantAnalysis(
        report,
        over_baseline,
        steps,
        level,
        resamples,
        seed,
        max(1, tests),
        step_level,
        share,
        tuple(judged),
        correction,
        alpha,
    )


def _reversed(step: Transition) -> Transition:
    """``step`` read the other way (its target as the source): a baseline named after another
    variant. The test is symmetric; the difference and the verdict change sign."""
    d = step.difference
    flipped = (
        None
        if d is None
        else PairedDifference(
            -d.mean_difference, -d.high, -d.low, d.level, d.resamples, d.seed, d.pairs, d.method
        )
    )
    turned: dict[Verdict, Verdict] = {
        "worth it": "not worth it",
        "not worth it": "worth it",
        "inconclusive": "inconclusive",
    }
    return Transition(
        step.target,
        step.source,
        {},
        None if step.cost_of_pass_delta is None else -step.cost_of_pass_delta,
        turned[step.verdict],
        f"read from {step.source} -> {step.target}: {step.reason}",
        flipped,
        step.p_value,
        step.adjusted_p,
    )
