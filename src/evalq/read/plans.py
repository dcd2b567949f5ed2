"""Run plans: how many runs each variant of a Scylla task said it would send, and what a
variant that sent fewer is read as.

A submitter who sends only a variant's best runs (5 of 10) makes it look better than it is. So:

- A variant's **plan** is the most runs any of its runs declares (``planned_runs``) or the
  task's profile sets (``scylla.planned_runs``), whichever is larger: a later run cannot lower it.
- Runs **planned and not sent** count as failures (pass rate, implementation rate and composite
  0) at the task's worst cost and time among its counted runs (`padded`). Runs held for review
  were sent: they are not counted as missing.
- A variant with fewer runs than its plan, or (after its plan) than its peers (the median of
  the other variants' runs, each after its plan), **says so** (`Shortfall.note`: "T1: 5 of 10
  planned runs"). Short of its peers without a plan that covers them, its steps' verdicts are
  **withheld**: nothing says which runs were not sent.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from evalq.core.profile import ScyllaProfile
from evalq.core.results import ScyllaScores
from evalq.read.run_counts import RunCounts
from evalq.read.variants import VariantsAnalysis, VariantStep, variant_runs
from evalq.read.view import ScoredRow
from evalq.scoring.scylla import letter_grade


@dataclass(frozen=True)
class Shortfall:
    """A variant that sent fewer runs than it planned or than its peers (``peers``: the median
    of the other variants' runs, each at least its plan)."""

    variant: str
    sent: int
    planned: int | None
    peers: int

    @property
    def withheld(self) -> bool:
        """Its verdicts are withheld: even its planned runs are fewer than its peers' runs."""
        return max(self.sent, self.planned or 0) < self.peers

    def note(self) -> str:
        """What the board, the comparison and the verdict say."""
        said = []
        if self.planned is not None and self.sent < self.planned:
            said.append(
                f"{self.variant}: {self.sent} of {self.planned} planned runs (the "
                f"{self.planned - self.sent} not sent count as failures at the task's worst cost)"
            )
        if self.withheld:
            said.append(
                f"{self.variant}: {max(self.sent, self.planned or 0)} runs, its peers "
                f"{self.peers} (no run plan covers the difference): its verdicts are withheld"
            )
        return "; ".join(said)


def counts_of(rows: Sequence[ScoredRow]) -> RunCounts:
    """The plans' counts (`RunCounts`) read from ``rows``: every run of the task."""
    sent: dict[str, int] = {}
    counted: dict[str, int] = {}
    declared: dict[str, int] = {}
    costs, times = [], []
    for row in rows:
        variant = row.submission.variant
        if variant is not None:
            planned = (row.submission.payload or {}).get("planned_runs")
            if planned:
                declared[variant] = max(declared.get(variant, 0), planned)
        scylla = row.scores.scylla
        if scylla is None:
            continue
        if variant is not None:
            sent[variant] = sent.get(variant, 0) + 1
            if not row.held:
                counted[variant] = counted.get(variant, 0) + 1
        if scylla.cost_usd is not None:
            costs.append(scylla.cost_usd)
        if scylla.duration_seconds is not None:
            times.append(scylla.duration_seconds)
    return RunCounts(
        sent, counted, declared, max(costs) if costs else None, max(times) if times else None
    )


def plans_of(rows: Sequence[ScoredRow], profile: ScyllaProfile) -> dict[str, int]:
    """Each variant's plan: the most its runs declare, at least the profile's (if set)."""
    variants = {row.submission.variant for row in rows} - {None}
    return _plans(counts_of(rows), sorted(v for v in variants if v is not None), profile)


def _plans(counts: RunCounts, variants: Sequence[str], profile: ScyllaProfile) -> dict[str, int]:
    plans: dict[str, int] = {}
    for variant, declared in counts.declared.items():
        found = max(declared, profile.planned_runs or 0)
        if found:
            plans[variant] = found
    if profile.planned_runs is not None:
        for variant in variants:
            plans.setdefault(variant, profile.planned_runs)
    return plans


def shortfalls(
    rows: Sequence[ScoredRow], profile: ScyllaProfile, counts: RunCounts | None = None
) -> dict[str, Shortfall]:
    """The variants (of the runs that count, held ones included: they were sent) short of
    their plan or of their peers, by name. ``counts``: the whole task's, when ``rows`` are a
    sample of it (else they are read from ``rows``)."""
    counts = counts or counts_of(rows)
    sent = dict(counts.sent)
    plans = _plans(counts, sorted(sent), profile)
    shown = {v: max(n, plans.get(v, 0)) for v, n in sent.items()}
    found = {}
    for variant, n in sent.items():
        others = [m for v, m in shown.items() if v != variant]
        # the peers' typical count: a variant padded with extra runs does not make the others
        # look short
        peers = math.floor(statistics.median(others)) if others else 0
        short = Shortfall(variant, n, plans.get(variant), peers)
        if (short.planned is not None and n < short.planned) or short.withheld:
            found[variant] = short
    return found


def padded(
    runs: Mapping[str, Sequence[ScyllaScores]],
    short: Mapping[str, Shortfall],
    rows: Sequence[ScoredRow],
    profile: ScyllaProfile,
    counts: RunCounts | None = None,
) -> dict[str, list[ScyllaScores]]:
    """``runs`` (by variant) with each variant's planned runs not sent added as failures at the
    task's worst cost and time among ``rows`` (None when no run has one). ``counts``: the whole
    task's, when ``runs`` are a sample of it: a sampled variant gets its missing runs in the
    share its sample holds of its runs."""
    counts = counts or counts_of(rows)
    costs, times = counts.worst_cost, counts.worst_time
    found = {v: list(found) for v, found in runs.items()}
    for variant, shortfall in short.items():
        missing = (shortfall.planned or 0) - shortfall.sent
        if missing <= 0 or variant not in found:
            continue
        whole = counts.counted.get(variant, 0)
        if whole > len(found[variant]) > 0:  # a sample of the variant's runs
            missing = max(1, round(missing * len(found[variant]) / whole))
        failure = ScyllaScores(
            passed=False,
            pass_rate=0.0,
            impl_rate=0.0,
            composite=0.0,
            grade=letter_grade(0.0, profile),
            cost_usd=costs,
            cost_of_pass=math.inf if costs is not None else None,
            duration_seconds=times,
            variant=variant,
            run_index=None,
        )
        found[variant] += [failure] * missing
    return found


def planned_variant_runs(
    rows: Sequence[ScoredRow],
    profile: ScyllaProfile,
    *,
    include_held: bool = False,
    counts: RunCounts | None = None,
) -> tuple[dict[str, list[ScyllaScores]], dict[str, Shortfall]]:
    """`variant_runs` with every variant's planned runs not sent added as failures, and the
    variants short of their plan or their peers: what every variant statistic reads
    (``counts``: the whole task's when ``rows`` are a sample of it)."""
    short = shortfalls(rows, profile, counts)
    runs = variant_runs(rows, include_held=include_held)
    return padded(runs, short, rows, profile, counts), short


def with_shortfalls(analysis: VariantsAnalysis, short: Mapping[str, Shortfall]) -> VariantsAnalysis:
    """``analysis`` saying which variants are short: each step from or to one says so in its
    reason, and one whose verdict depends on a variant short of its peers is withheld
    (inconclusive, its reason beginning "withheld"); the notes list every shortfall."""
    if not short:
        return analysis

    def said(step: VariantStep) -> VariantStep:
        found = [short[v] for v in (step.source, step.target) if v in short]
        if not found:
            return step
        notes = "; ".join(s.note() for s in found)
        if any(s.withheld for s in found):
            return step.model_copy(
                update={"verdict": "inconclusive", "reason": f"withheld: {notes}", "withheld": True}
            )
        return step.model_copy(update={"reason": f"{notes}; {step.reason}"})

    notes = [short[v].note() for v in sorted(short)]
    best = analysis.best_value
    if best is not None and best in short and short[best].withheld:
        notes.append(f"best value {best} is withheld: {short[best].note()}")
    return analysis.model_copy(
        update={
            "over_baseline": [said(s) for s in analysis.over_baseline],
            "transitions": [said(s) for s in analysis.transitions],
            "run_plans": notes,
        }
    )
