"""Is a variant worth it? Per-metric uplift with bootstrap intervals, and a verdict per step.

Spec 003 measures a variant (T1, T2, ...) by its uplift over T0. This module completes that
analysis the way a reader needs it to decide:

- every metric's uplift with a bootstrap interval (`evalq.stats.bootstrap`): the composite
  (what the task ranks by), the pass rate, the implementation rate and the cost;
- for each variant over the baseline (spec 003's uplift), and for each *transition* between
  neighbouring variants (T0 -> T1, T1 -> T2, ...), those uplifts, the change in cost of pass,
  and a verdict on the composite: **worth it** when its
  interval lies above zero, **not worth it** when it lies below, **inconclusive** when it
  holds zero (or there is no interval). The cost's interval is reported beside it and named
  in the reason, never folded into the decision: whether a quality gain is worth its price is
  the reader's call, made with both intervals in front of them.

The verdicts of one analysis are one family: with m distinct steps (over the baseline and
between neighbours), every step's intervals are drawn at level ``1 - (1 - level) / m``
(Bonferroni), so that the chance of any "worth it" or "not worth it" among identical variants
stays at most ``1 - level``. A step where either side has fewer than `MIN_RUNS` composites has
no interval and no verdict but "inconclusive" with the words "too few runs to compare".

The pass rate's uplift compares means (its median over pass/fail runs is only 0 or 1); the
other metrics compare medians, as spec 003's uplift does. A lower cost is better: its uplift
is negative when the later variant is cheaper.
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
from evalq.stats.contrast import MIN_PAIRS

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
"""Fewest composites per side for a step's intervals and verdict (bench/interval_coverage.py:
from 5 runs per variant the uplift intervals cover >= 93% of the time for a nominal 95%)."""


@dataclass(frozen=True)
class Transition:
    """One step from a variant to the next in natural order.

    Attributes:
        source / target: the two variants (``target`` follows ``source``).
        uplift: metric -> the uplift of ``target`` over ``source`` with its interval; a metric
            either side never reported is left out.
        cost_of_pass_delta: ``target``'s cost of pass minus ``source``'s (dollars); None when
            either is unknown or infinite (a variant that never passes).
        verdict: on the composite's interval (module docstring).
        reason: the verdict in words, with the cost's interval.
    """

    source: str
    target: str
    uplift: dict[Metric, UpliftInterval]
    cost_of_pass_delta: float | None
    verdict: Verdict
    reason: str


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


def verdict(uplift: Mapping[Metric, UpliftInterval]) -> tuple[Verdict, str]:
    """The verdict on a transition's uplifts and the reason in words (module docstring)."""
    composite = uplift.get("composite")
    cost = _cost_words(uplift)
    if composite is None or composite.uplift is None:
        return "inconclusive", f"no composite uplift (baseline median 0 or missing); {cost}"
    level = f"{composite.level:.0%}"
    shown = f"composite {composite.uplift:+.1%} {_percent(composite)}"
    if composite.low is not None and composite.low > 0:
        return "worth it", f"{shown}: the {level} interval is above zero; {cost}"
    if composite.high is not None and composite.high < 0:
        return "not worth it", f"{shown}: the {level} interval is below zero; {cost}"
    return "inconclusive", f"{shown}: the {level} interval includes zero; {cost}"


def _cost_of_pass_delta(source: VariantStats, target: VariantStats) -> float | None:
    before, after = source.cost_of_pass, target.cost_of_pass
    if before is None or after is None or math.isinf(before) or math.isinf(after):
        return None
    return after - before


def transition(
    source: VariantStats,
    target: VariantStats,
    runs_by_variant: Mapping[str, Sequence[ScyllaScores]],
    *,
    level: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Transition:
    """The step from ``source`` to ``target``: per-metric uplifts, cost-of-pass change, verdict.

    Under `MIN_RUNS` composites on either side: no interval, "inconclusive" and the words.
    """
    sizes = [len(_values(runs_by_variant[v.variant], "composite")) for v in (source, target)]
    if min(sizes) < MIN_RUNS:
        return Transition(
            source=source.variant,
            target=target.variant,
            uplift={},
            cost_of_pass_delta=_cost_of_pass_delta(source, target),
            verdict="inconclusive",
            reason=f"too few runs to compare (n={sizes[0]} and {sizes[1]}; at least {MIN_RUNS})",
        )
    uplift = metric_uplifts(
        runs_by_variant[target.variant],
        runs_by_variant[source.variant],
        level=level,
        resamples=resamples,
        seed=seed,
    )
    decided, reason = verdict(uplift)
    return Transition(
        source=source.variant,
        target=target.variant,
        uplift=uplift,
        cost_of_pass_delta=_cost_of_pass_delta(source, target),
        verdict=decided,
        reason=reason,
    )


@dataclass(frozen=True)
class VariantAnalysis:
    """Spec 003's variant report completed: uplifts with intervals and a verdict per step.

    Attributes:
        report: the per-variant statistics and cross-variant figures (`compare_variants`).
        over_baseline: the step from the baseline variant to every other variant, in natural
            order (spec 003's uplift, with intervals and a verdict); empty without a baseline.
        transitions: the steps between neighbouring variants (T0 -> T1, T1 -> T2, ...).
        level / resamples / seed: how every interval was drawn.
        steps: the distinct steps judged together (the Bonferroni family).
        step_level: the level each step's intervals are drawn at, ``1 - (1 - level) / steps``.
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

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: the report's keys, then the intervals, steps and method."""
        return {
            **self.report.to_dict(),
            "over_baseline": [asdict(t) for t in self.over_baseline],
            "transitions": [asdict(t) for t in self.transitions],
            "bootstrap": {
                "level": self.level,
                "resamples": self.resamples,
                "seed": self.seed,
                "steps": self.steps,
                "step_level": self.step_level,
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
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> VariantAnalysis:
    """The complete variant analysis of a task's runs (each variant at least one run)."""
    report = compare_variants(runs_by_variant, profile)
    by_name = {v.variant: v for v in report.variants}
    base = by_name.get(report.baseline) if report.baseline else None
    firsts = [(base, v) for v in report.variants if base and v is not base]
    neighbours = list(zip(report.variants, report.variants[1:], strict=False))
    family = (
        len({(a.variant, b.variant) for a, b in firsts + neighbours}) if base or neighbours else 0
    )
    step_level = 1 - (1 - level) / max(1, family)
    done: dict[tuple[str, str], Transition] = {}

    def step(source: VariantStats | None, target: VariantStats) -> Transition:
        assert source is not None
        key = (source.variant, target.variant)
        if key not in done:  # T0 -> T1 is both a step over the baseline and between neighbours
            done[key] = transition(
                source, target, runs_by_variant, level=step_level, resamples=resamples, seed=seed
            )
        return done[key]

    over_baseline = tuple(step(a, b) for a, b in firsts)
    steps = tuple(step(a, b) for a, b in neighbours)
    share = best_value_share(runs_by_variant, report.best_value, resamples=resamples, seed=seed)
    return VariantAnalysis(
        report, over_baseline, steps, level, resamples, seed, max(1, family), step_level, share
    )
