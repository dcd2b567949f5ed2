"""The bridging sample of a change of judge: runs judged by both, the bias and agreement of the
new judge against the old, with intervals, and how many runs it takes (docs/judge.md).

The count reuses the power plan's arithmetic (`evalq.stats.power.pairs_needed`): a bias of
``detect`` on the judge's [0, 1] scale is to be detected by the paired test with 80% power at
``alpha``, the spread being that of the pairs' own differences. Until two pairs measure it
the count is unknown (None) and `BRIDGE_START` pairs are asked for first.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

import numpy as np

from evalq.core.judge_series import Bridge, BridgeStatus
from evalq.judge.agreement import krippendorff_alpha
from evalq.stats.confidence import confidence_interval
from evalq.stats.power import POWER, pairs_needed, sign_flip_floor

RESAMPLES = 1000
MIN_AGREEMENT_PAIRS = 5
"""Fewer pairs than this: no interval of the agreement (as the judge-human agreement)."""


def bridge_start(alpha: float) -> int:
    """Pairs a bridge asks for before its spread is known: the fewest at which the paired
    test can reject at ``alpha`` (`sign_flip_floor`)."""
    return sign_flip_floor(alpha)


def _alpha(old: Sequence[float], new: Sequence[float]) -> float | None:
    return krippendorff_alpha([list(old), list(new)], metric="interval")


def _agreement_interval(
    old: Sequence[float], new: Sequence[float], level: float
) -> tuple[float | None, float | None]:
    if len(old) < MIN_AGREEMENT_PAIRS:
        return None, None
    draws = np.random.default_rng(0).integers(0, len(old), size=(RESAMPLES, len(old)))
    values = [
        a
        for picks in draws
        if (a := _alpha([old[i] for i in picks], [new[i] for i in picks])) is not None
    ]
    if len(values) < RESAMPLES / 2:  # most resamples without variation: no interval
        return None, None
    tail = (1 - level) / 2
    return float(np.quantile(values, tail)), float(np.quantile(values, 1 - tail))


def bridge(
    old_series: str,
    new_series: str,
    old: Sequence[float],
    new: Sequence[float],
    *,
    detect: float,
    alpha: float,
    level: float,
    resample: bool = True,
) -> Bridge:
    """The bridge between two judges from the scores each gave the same runs (``old[i]`` and
    ``new[i]`` are one run's); ``resample=False`` leaves the agreement's interval out (the
    marks beside a board need only the counts)."""
    if len(old) != len(new):
        raise ValueError("old and new must score the same runs")
    pairs = len(old)
    differences = [n - o for o, n in zip(old, new, strict=True)]
    needed = None
    if pairs >= 2:
        needed = pairs_needed(
            sd=statistics.stdev(differences), detect=detect, alpha=alpha, power=POWER
        )
    bias = statistics.fmean(differences) if differences else None
    ci = confidence_interval(differences, level, bounds=(-1.0, 1.0))
    agreement = _alpha(old, new) if pairs >= 2 else None
    low, high = _agreement_interval(old, new, level) if resample else (None, None)
    status: BridgeStatus = (
        "not bridged"
        if pairs == 0
        else "bridged"
        if needed is not None and pairs >= needed
        else "bridging"
    )
    start = bridge_start(alpha)
    want = f"{needed}" if needed is not None else f"at least {start} to measure the spread"
    if pairs == 0:
        note = f"not bridged: no run judged by both judges ({want} needed)"
    else:
        shown = f"bias {bias:+.3f}"
        if ci.enough_data:
            shown += f" [{ci.low:+.3f}, {ci.high:+.3f}]"
        shown += ", agreement " + ("undefined" if agreement is None else f"{agreement:.3f}")
        if low is not None and high is not None:
            shown += f" [{low:.3f}, {high:.3f}]"
        note = f"{status}: {pairs} run(s) judged by both ({want} needed); {shown}"
        if ci.enough_data and not (ci.low <= 0 <= ci.high):
            note += "; the new judge scores these runs differently"
    return Bridge(
        old=old_series,
        new=new_series,
        pairs=pairs,
        needed=needed,
        detect=detect,
        alpha=alpha,
        level=level,
        bias=bias,
        bias_low=ci.low if ci.enough_data else None,
        bias_high=ci.high if ci.enough_data else None,
        agreement=None if agreement is None or not math.isfinite(agreement) else agreement,
        agreement_low=low,
        agreement_high=high,
        status=status,
        note=note,
    )
