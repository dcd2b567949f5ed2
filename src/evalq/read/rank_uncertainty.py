"""Rank uncertainty on a leaderboard: what is resampled for each task kind (issue 18).

The method is `evalq.scoring.rank_interval`'s; this module decides the units:

- ``scylla``: the per-variant board. A variant's units are its repeat runs; each resample
  draws each variant's runs on its own (runs of different variants are not paired) and
  recomputes its median composite; the board's order (median composite, 4 decimals, a variant
  without composites last) ranks them. The runs beneath are single runs: no interval.
- ``suite``: the entries. A submission's units are its scenarios; entries that ran the same
  scenario set draw the same scenarios (paired), the others each their own. The final score is
  recomputed the suite scorer's way (`evalq.scoring.suite.resample`); the gate and the
  completeness stay as stored, so a run that passed its gate outranks a blocked one in every
  resample.
- ``arena`` and ``peerread``: each entry is one submission scored once; there is nothing to
  resample, so no interval (repeat runs of one tool and model are separate rows, not pooled).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median
from typing import Literal

from evalq.core.profile import SuiteProfile
from evalq.core.schemas import ScenarioResult
from evalq.scoring.kinds import KindRule, RankedValues, sort_key
from evalq.scoring.rank_interval import Key, RankedRow, RankUncertainty, rank_intervals
from evalq.scoring.suite.aggregate import ScenarioFacts, scenario_facts
from evalq.scoring.suite.resample import resampled_final_score

SINGLE_SUBMISSION = "a single submission: nothing to resample"
SINGLE_RUN = "a single run: its variant's rank interval is on the variant board"


@dataclass(frozen=True)
class RankMethod:
    """How a leaderboard's rank intervals were drawn.

    Attributes:
        applies_to: which rows carry intervals: ``variants`` (Scylla), ``entries`` (suite), or
            None (no row has resampling units).
        units: what was resampled: ``runs`` within each variant, ``scenarios`` of each entry.
        resamples: resamples drawn (0 when none was).
        seed: the seed of the resamples.
        level: the intervals' level (the 2.5th and 97.5th percentile ranks at 0.95).
        note: the method in a sentence.
    """

    applies_to: Literal["entries", "variants"] | None
    units: Literal["runs", "scenarios"] | None
    resamples: int
    seed: int
    level: float
    note: str


def method_of(kind: str, uncertainty: RankUncertainty | None, level: float) -> RankMethod:
    """The `RankMethod` of a board of ``kind`` (``uncertainty``: what was drawn, if anything)."""
    resamples = 0 if uncertainty is None else uncertainty.resamples
    seed = 0 if uncertainty is None else uncertainty.seed
    if kind == "scylla":
        note = (
            "each variant's runs resampled with replacement and its median composite "
            "recomputed; variants whose intervals overlap are not separable; the runs beneath "
            "are single runs"
        )
        return RankMethod("variants", "runs", resamples, seed, level, note)
    if kind == "suite":
        note = (
            "each entry's scenarios resampled with replacement (the same draw for entries that "
            "ran the same scenario set) and its final score recomputed, the gate kept as "
            "stored; entries whose intervals overlap are not separable"
        )
        return RankMethod("entries", "scenarios", resamples, seed, level, note)
    note = "every entry is a single submission: nothing to resample, no rank intervals"
    return RankMethod(None, None, 0, 0, level, note)


def suite_uncertainty(
    rule: KindRule,
    values: Sequence[RankedValues],
    scenarios: Sequence[Sequence[ScenarioResult]],
    profile: SuiteProfile,
    *,
    level: float,
) -> RankUncertainty:
    """Rank intervals of a suite board's entries over resamples of their scenarios.

    Args:
        rule: the suite kind's rule (its sort key).
        values: each entry's ranked values as stored (gate, completeness, final score).
        scenarios: each entry's scenarios; empty for an entry without suite scores.
        profile: the suite section that recomputes a final score.
        level: the intervals' level.
    """

    def row(ranked: RankedValues, ran: Sequence[ScenarioResult]) -> RankedRow[ScenarioFacts]:
        def key(sample: Sequence[ScenarioFacts]) -> Key:
            final = resampled_final_score(sample, profile)
            return sort_key(rule, dataclasses.replace(ranked, suite_final_score=final))

        kept = sorted(ran, key=lambda s: s.id) if ranked.suite_passed is not None else []
        units = [scenario_facts(s, profile) for s in kept]
        return RankedRow(sort_key(rule, ranked), units, key, tuple(s.id for s in kept))

    rows = [row(v, s) for v, s in zip(values, scenarios, strict=True)]
    return rank_intervals(rows, unit="scenario", level=level)


def variant_key(composites: Sequence[float | None]) -> Key:
    """The variant board's order: median composite (4 decimals) descending, none last."""
    present = [c for c in composites if c is not None]
    return (-round(median(present), 4),) if present else (1.0,)


def variant_uncertainty(
    composites: Sequence[Sequence[float | None]], *, level: float
) -> RankUncertainty:
    """Rank intervals of a Scylla board's variants over resamples of each variant's runs.

    Args:
        composites: each variant's runs' composites (None for a run without one).
        level: the intervals' level.
    """
    rows = [RankedRow(variant_key(runs), runs, variant_key) for runs in composites]
    return rank_intervals(rows, unit="run", level=level)
