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

A declared plan is the submitter's own statement, made after it saw its runs. A variant that
**registered** its runs before they happened (`evalq.core.tickets`: one ticket per run, a
deadline) is read by its tickets instead: only its runs that used a ticket count for it (the
others are set aside and said); every ticket without a run by its deadline is a run planned
and not sent (a failure, as above); while some are still pending (unused before the deadline,
or their run not evaluated yet) its verdicts wait, withheld and said. The verdicts of a step
from or to a variant without tickets say "not pre-registered" (`with_shortfalls`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from evalq.core.profile import ScyllaProfile
from evalq.core.results import ScyllaScores
from evalq.read.run_counts import RunCounts
from evalq.read.variants import VariantsAnalysis, VariantStep, variant_runs
from evalq.read.view import ScoredRow
from evalq.scoring.scylla import letter_grade
from evalq.scoring.variants import natural_order
from evalq.store.tickets import VariantTickets

Tickets = Mapping[str, VariantTickets]
"""The variants that registered their runs, by name (`evalq.store.tickets.tickets_of`)."""
NOT_PRE_REGISTERED = "not pre-registered"
"""What a verdict from or to a variant without run tickets says."""


@dataclass(frozen=True)
class Shortfall:
    """A variant that sent fewer runs than it planned or than its peers (``peers``: the median
    of the other variants' runs, each at least its plan); or, with run tickets (``tickets``:
    how many it was issued), one with tickets due and unused, tickets pending (``waiting``,
    due by ``due``) or runs sent without a ticket (``aside``)."""

    variant: str
    sent: int
    planned: int | None
    peers: int
    tickets: int | None = None
    waiting: int = 0
    due: datetime | None = None
    aside: int = 0

    @property
    def short_of_peers(self) -> bool:
        """Even its planned runs are fewer than its peers' runs."""
        return max(self.sent, self.planned or 0, self.tickets or 0) < self.peers

    @property
    def withheld(self) -> bool:
        """Its verdicts are withheld: short of its peers, or tickets of its are pending."""
        return self.short_of_peers or self.waiting > 0

    def note(self) -> str:
        """What the board, the comparison and the verdict say."""
        if self.tickets is not None:
            return "; ".join(self._ticket_notes())
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

    def _ticket_notes(self) -> list[str]:
        said = []
        missing = (self.planned or 0) - self.sent
        if missing > 0:
            said.append(
                f"{self.variant}: {self.sent} of {self.planned} registered runs due (the "
                f"{missing} tickets without an evaluated run by their deadline count as "
                "failures at the task's worst cost)"
            )
        if self.waiting:
            due = "" if self.due is None else f" (due by {self.due:%Y-%m-%dT%H:%MZ})"
            said.append(
                f"{self.variant}: {self.waiting} of {self.tickets} tickets pending{due}: its "
                "verdicts wait for them"
            )
        if self.aside:
            said.append(
                f"{self.variant}: {self.aside} runs sent without a ticket are not counted (its "
                "runs are registered: only ticketed runs count)"
            )
        if self.short_of_peers:
            said.append(
                f"{self.variant}: {self.tickets} registered runs, its peers {self.peers}: its "
                "verdicts are withheld"
            )
        return said


def unticketed(rows: Sequence[ScoredRow], tickets: Tickets) -> dict[str, list[str]]:
    """The runs among ``rows`` of a variant with tickets that used none (ids, by variant)."""
    aside: dict[str, list[str]] = {}
    for row in rows:
        variant = row.submission.variant
        book = None if variant is None else tickets.get(variant)
        if variant is not None and book is not None and row.submission.id not in book.used:
            aside.setdefault(variant, []).append(row.submission.id)
    return aside


def counted_rows(rows: Sequence[ScoredRow], tickets: Tickets | None) -> list[ScoredRow]:
    """``rows`` without the runs of a variant with tickets that used none: the runs that
    count for their variants."""
    if not tickets:
        return list(rows)
    aside = {sid for ids in unticketed(rows, tickets).values() for sid in ids}
    return [row for row in rows if row.submission.id not in aside]


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
    rows: Sequence[ScoredRow],
    profile: ScyllaProfile,
    counts: RunCounts | None = None,
    tickets: Tickets | None = None,
) -> dict[str, Shortfall]:
    """The variants (of the runs that count, held ones included: they were sent) short of
    their plan or of their peers, or with tickets pending, due and unused or runs sent
    without one, by name. ``counts``: the whole task's, when ``rows`` are a sample of it (else
    they are read from ``rows``; a variant with tickets then counts its tickets whose run was
    evaluated); ``tickets``: the variants that registered their runs."""
    tickets = tickets or {}
    aside = unticketed(rows, tickets)
    sampled = counts is not None
    counts = counts or counts_of(counted_rows(rows, tickets))
    sent = dict(counts.sent)
    for variant, registered in tickets.items():
        if sampled and variant in sent:  # the sample's counts hold its runs without tickets
            sent[variant] = registered.settled
        elif variant in aside:
            sent.setdefault(variant, 0)
    plans = _plans(counts, sorted(sent), profile)
    for variant, registered in tickets.items():  # the tickets are its plan
        plans[variant] = registered.issued
    shown = {v: max(n, plans.get(v, 0)) for v, n in sent.items()}
    found: dict[str, Shortfall] = {}
    for variant, n in sent.items():
        others = [m for v, m in shown.items() if v != variant]
        # the peers' typical count: a variant padded with extra runs does not make the others
        # look short
        peers = math.floor(statistics.median(others)) if others else 0
        book = tickets.get(variant)
        short = (
            Shortfall(variant, n, plans.get(variant), peers)
            if book is None
            else Shortfall(
                variant,
                n,
                book.issued - book.waiting,
                peers,
                tickets=book.issued,
                waiting=book.waiting,
                due=book.due,
                aside=len(aside.get(variant, ())),
            )
        )
        if (short.planned is not None and n < short.planned) or short.withheld or short.aside:
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
    sampled = counts is not None
    counts = counts or counts_of(rows)
    costs, times = counts.worst_cost, counts.worst_time
    found = {v: list(found) for v, found in runs.items()}
    for variant, shortfall in short.items():
        missing = (shortfall.planned or 0) - shortfall.sent
        if missing <= 0 or (variant not in found and shortfall.tickets is None):
            continue
        found.setdefault(variant, [])  # registered, every run it sent without a ticket
        whole = counts.counted.get(variant, 0)
        if sampled and whole > len(found[variant]) > 0:  # a sample of the variant's runs
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
    tickets: Tickets | None = None,
) -> tuple[dict[str, list[ScyllaScores]], dict[str, Shortfall]]:
    """`variant_runs` of the runs that count (`counted_rows`) with every variant's planned
    runs not sent added as failures, and the variants short of their plan or their peers:
    what every variant statistic reads (``counts``: the whole task's when ``rows`` are a
    sample of it; ``tickets``: the variants that registered their runs)."""
    short = shortfalls(rows, profile, counts, tickets)
    runs = variant_runs(counted_rows(rows, tickets), include_held=include_held)
    return padded(runs, short, rows, profile, counts), short


def unregistered(variants: Collection[str], tickets: Tickets | None) -> list[str]:
    """Those of ``variants`` without run tickets, in order (none when ``tickets`` is None:
    the caller does not read registrations, a comparison across tasks)."""
    return [] if tickets is None else [v for v in variants if v not in tickets]


def registration_note(variants: Sequence[str]) -> str:
    """What a verdict from or to ``variants`` (without run tickets) says."""
    return (
        f"{NOT_PRE_REGISTERED}: {', '.join(variants)} (no run tickets: a run plan it declares is "
        "its submitter's own statement, made after the runs; `evalq plan` registers runs "
        "before they happen)"
    )


def with_shortfalls(
    analysis: VariantsAnalysis,
    short: Mapping[str, Shortfall],
    tickets: Tickets | None = None,
) -> VariantsAnalysis:
    """``analysis`` saying which variants are short: each step from or to one says so in its
    reason, and one whose verdict depends on a variant short of its peers (or with tickets
    pending) is withheld (inconclusive, its reason beginning "withheld"); the notes list every
    shortfall. With ``tickets`` (the variants that registered their runs), a step from or to a
    variant without any says "not pre-registered" in its reason, and the notes say which."""

    def said(step: VariantStep) -> VariantStep:
        found = [short[v] for v in (step.source, step.target) if v in short]
        loose = unregistered((step.source, step.target), tickets)
        if not found and not loose:
            return step
        notes = "; ".join([s.note() for s in found] + ([registration_note(loose)] if loose else []))
        if any(s.withheld for s in found):
            return step.model_copy(
                update={"verdict": "inconclusive", "reason": f"withheld: {notes}", "withheld": True}
            )
        return step.model_copy(update={"reason": f"{notes}; {step.reason}"})

    notes = [short[v].note() for v in sorted(short)]
    best = analysis.best_value
    if best is not None and best in short and short[best].withheld:
        notes.append(f"best value {best} is withheld: {short[best].note()}")
    steps = [*analysis.over_baseline, *analysis.transitions, *analysis.pairs]
    named = sorted({v for s in steps for v in (s.source, s.target)}, key=natural_order)
    loose = unregistered(named, tickets)
    if loose:
        notes.append(registration_note(loose))
    if best is not None and best in loose:
        notes.append(f"best value {best} is {NOT_PRE_REGISTERED}")
    if not notes:
        return analysis
    return analysis.model_copy(
        update={
            "over_baseline": [said(s) for s in analysis.over_baseline],
            "transitions": [said(s) for s in analysis.transitions],
            "pairs": [said(s) for s in analysis.pairs],
            "run_plans": notes,
        }
    )
