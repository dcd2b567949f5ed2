"""Rank uncertainty on a leaderboard: what is resampled for each task kind (docs/scoring.md,
"Rank uncertainty").

The method is `evalq.stats.rank_interval`'s; this module decides the units:

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
from collections.abc import Callable, Sequence
from statistics import median
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import Field

from evalq.core.profile import SuiteProfile
from evalq.core.schemas import ScenarioResult
from evalq.read.reply import Reply
from evalq.scoring.kinds import SORT_DIGITS, KindRule, RankedValues, sort_key
from evalq.scoring.suite.aggregate import ScenarioFacts, scenario_facts
from evalq.scoring.suite.resample import (
    batchable,
    resampled_final_score,
    resampled_final_scores,
)
from evalq.stats.rank_interval import Key, RankedRow, rank_intervals
from evalq.stats.rank_interval import RankUncertainty as DrawnRanks

SINGLE_SUBMISSION = "a single submission: nothing to resample"
SINGLE_RUN = "a single run: its variant's rank interval is on the variant board"


class RankUncertainty(Reply):
    """How a board's rank intervals were drawn (a percentile bootstrap of competition ranks)."""

    applies_to: Literal["entries", "variants"] | None = Field(
        description="The rows with intervals: variants (scylla), entries (suite); null: none."
    )
    units: Literal["runs", "scenarios"] | None = Field(
        description="What was resampled: each variant's runs, or each entry's scenarios."
    )
    resamples: int = Field(description="Resamples drawn; 0 when nothing was resampled.")
    seed: int = Field(description="Seed of the resamples: the same results, the same intervals.")
    level: float = Field(description="Level of the intervals, e.g. 0.95.")
    note: str = Field(description="The method in a sentence.")


def method_of(kind: str, uncertainty: DrawnRanks | None, level: float) -> RankUncertainty:
    """How a board of ``kind`` drew its rank intervals (``uncertainty``: what was drawn)."""
    resamples = 0 if uncertainty is None else uncertainty.resamples
    seed = 0 if uncertainty is None else uncertainty.seed
    if kind == "scylla":
        note = (
            "each variant's runs resampled with replacement and its median composite "
            "recomputed; variants whose intervals overlap are not separable; the runs beneath "
            "are single runs"
        )
        return RankUncertainty(
            applies_to="variants",
            units="runs",
            resamples=resamples,
            seed=seed,
            level=level,
            note=note,
        )
    if kind == "suite":
        note = (
            "each entry's scenarios resampled with replacement (the same draw for entries that "
            "ran the same scenario set) and its final score recomputed, the gate kept as "
            "stored; entries whose intervals overlap are not separable"
        )
        return RankUncertainty(
            applies_to="entries",
            units="scenarios",
            resamples=resamples,
            seed=seed,
            level=level,
            note=note,
        )
    note = "every entry is a single submission: nothing to resample, no rank intervals"
    return none_drawn(level, note)


SUITE_INTERVAL_MAX_ENTRIES = 20
"""Most ranked entries a suite board draws rank intervals for. Each resample recomputes every
entry's final score from its scenarios, 1,000 times per entry and 10,000 more when an edge is
undecided; in batches (`resampled_final_scores`) 20 entries of 20 scenarios cost ~2 s of the
refresh that draws them (docs/scoring.md, "Rank uncertainty")."""


def too_many_entries(count: int) -> str:
    """Why a suite board of ``count`` ranked entries has no rank intervals."""
    return (
        f"not drawn: a suite board draws rank intervals for at most "
        f"{SUITE_INTERVAL_MAX_ENTRIES} ranked entries and this one ranks {count} (compare two "
        "models over the scenarios instead: evalq compare)"
    )


def none_drawn(level: float, note: str) -> RankUncertainty:
    """A board without rank intervals, and why."""
    return RankUncertainty(applies_to=None, units=None, resamples=0, seed=0, level=level, note=note)


def suite_uncertainty(
    rule: KindRule,
    values: Sequence[RankedValues],
    scenarios: Sequence[Sequence[ScenarioResult]],
    profile: SuiteProfile,
    *,
    level: float,
) -> DrawnRanks:
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

        def batch(drawn: npt.NDArray[np.intp]) -> list[Key]:
            # a key depends on a final score only through its rounding (`SORT_DIGITS`), and
            # rounding the rounded value changes nothing: one key per rounded value
            keys: dict[float | None, Key] = {}
            shown = [
                None if final is None else round(final, SORT_DIGITS)
                for final in resampled_final_scores(units, profile, drawn)
            ]
            for value in shown:
                if value not in keys:
                    keys[value] = sort_key(
                        rule, dataclasses.replace(ranked, suite_final_score=value)
                    )
            return [keys[value] for value in shown]

        kept = sorted(ran, key=lambda s: s.id) if ranked.suite_passed is not None else []
        units = [scenario_facts(s, profile) for s in kept]
        return RankedRow(
            sort_key(rule, ranked),
            units,
            key,
            tuple(s.id for s in kept),
            batch if batchable(units, profile) else None,
        )

    rows = [row(v, s) for v, s in zip(values, scenarios, strict=True)]
    return rank_intervals(rows, unit="scenario", level=level)


def variant_key(composites: Sequence[float | None]) -> Key:
    """The variant board's order: median composite (4 decimals) descending, none last."""
    present = [c for c in composites if c is not None]
    return (-round(median(present), 4),) if present else (1.0,)


def variant_uncertainty(
    composites: Sequence[Sequence[float | None]], *, level: float
) -> DrawnRanks:
    """Rank intervals of a Scylla board's variants over resamples of each variant's runs.

    Args:
        composites: each variant's runs' composites (None for a run without one).
        level: the intervals' level.
    """
    rows = [
        RankedRow(
            variant_key(runs),
            runs,
            variant_key,
            batch=None if any(c is None for c in runs) else _medians_of(runs),
        )
        for runs in composites
    ]
    return rank_intervals(rows, unit="run", level=level)


def _medians_of(runs: Sequence[float | None]) -> Callable[[npt.NDArray[np.intp]], list[Key]]:
    """`variant_key` of many resamples of ``runs`` (all present) at once: each resample's
    median as `statistics.median` takes it (the middle value, or the two middle values' sum
    halved), rounded as `variant_key` rounds it."""
    values = np.asarray(runs, dtype=np.float64)

    def keys(drawn: npt.NDArray[np.intp]) -> list[Key]:
        ordered = np.sort(values[drawn], axis=1)
        half = ordered.shape[1] // 2
        if ordered.shape[1] % 2:
            medians = ordered[:, half]
        else:
            medians = (ordered[:, half - 1] + ordered[:, half]) / 2
        rounded: dict[float, Key] = {}
        found = medians.tolist()
        for value in found:
            if value not in rounded:
                rounded[value] = (-round(value, 4),)
        return [rounded[value] for value in found]

    return keys
