"""Task kinds: what a task is about decides which scorers run and what its leaderboard ranks by.

| kind       | scorers in the merge      | leaderboard ranks by                               |
|------------|---------------------------|----------------------------------------------------|
| `arena`    | Arena                     | the Arena overall before the difficulty factor     |
| `peerread` | PeerRead composite, Arena | the PeerRead composite                             |
| `scylla`   | Scylla, Arena             | per variant (T0..Tn); runs by the Scylla composite |
| `suite`    | suite gate, Arena         | gate passed first, then the suite's final score    |

The Arena dimensions are computed wherever usage figures exist (every submission has them) and
shown as secondary columns. Within every kind a partial evaluation (a tier failed) ranks below
the complete ones. A task without a ``kind`` gets one derived from what it carries
(`derive_kind`); docs/scoring.md ("Task kinds") says the same for users.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from evalq.core.schemas import Task, TaskKind


@dataclass(frozen=True)
class KindRule:
    """What one kind of task scores and ranks by.

    Attributes:
        kind: the kind's name.
        ranking_key: the name of the value a leaderboard row is ranked by.
        scale: the range that value lives in (the Arena's 0-100, the composites' 0-1): a
            board's confidence interval is clamped to it, and is all of it with too few rows.
        peerread / scylla / suite: whether the merge runs that scorer.
    """

    kind: TaskKind
    ranking_key: str
    scale: tuple[float, float] = (0.0, 1.0)
    peerread: bool = False
    scylla: bool = False
    suite: bool = False


KINDS: dict[TaskKind, KindRule] = {
    "arena": KindRule("arena", "arena_overall_unadjusted", scale=(0.0, 100.0)),
    "peerread": KindRule("peerread", "peerread_composite", peerread=True),
    "scylla": KindRule("scylla", "scylla_composite", scylla=True),
    "suite": KindRule("suite", "suite_gate_then_final_score", suite=True),
}


def derive_kind(task: Task, *, has_variants: bool, has_scenarios: bool) -> TaskKind:
    """The kind of a task that does not name one.

    In this order: scenarios on its submissions or required scenarios -> ``suite``; reference
    outputs -> ``peerread``; a variant on its submissions -> ``scylla``; else ``arena``.
    """
    if has_scenarios or task.required_scenarios:
        return "suite"
    if task.reference_outputs:
        return "peerread"
    if has_variants:
        return "scylla"
    return "arena"


def kind_of(task: Task, *, has_variants: bool, has_scenarios: bool) -> KindRule:
    """The rule of ``task.kind``, or of the derived kind when the task names none."""
    kind = task.kind or derive_kind(task, has_variants=has_variants, has_scenarios=has_scenarios)
    return KINDS[kind]


@dataclass(frozen=True)
class RankedValues:
    """What a row of a leaderboard may be ranked by; None where the kind's scorer did not apply.

    Attributes:
        partial: a tier failed, so the row's composite misses inputs (ranks below complete ones).
        arena_unadjusted: the Arena overall before the difficulty factor.
        peerread_composite / scylla_composite / suite_final_score: those scorers' results.
        suite_passed: whether the suite gate passed.
    """

    partial: bool
    arena_unadjusted: float
    peerread_composite: float | None = None
    scylla_composite: float | None = None
    suite_passed: bool | None = None
    suite_final_score: float | None = None


def ranking_value(rule: KindRule, values: RankedValues) -> float | None:
    """The single number the kind ranks a row by (for display); None when it is missing."""
    if rule.kind == "peerread":
        return values.peerread_composite
    if rule.kind == "scylla":
        return values.scylla_composite
    if rule.kind == "suite":
        return values.suite_final_score
    return values.arena_unadjusted


SORT_DIGITS = 4
"""Decimals a row's ranking value is rounded to before rows are ordered (displayed ties rank
together)."""


def sort_key(
    rule: KindRule, values: RankedValues, *, ndigits: int = SORT_DIGITS
) -> tuple[float, ...]:
    """A key that sorts better rows first (ascending): rows without the kind's value last, then
    complete before partial, then the kind's own order; values are rounded so displayed ties
    rank together."""

    def desc(value: float | None) -> float:
        return math.inf if value is None else -round(value, ndigits)

    completeness = 1.0 if values.partial else 0.0
    if rule.kind == "suite":
        missing = 1.0 if values.suite_passed is None else 0.0
        gate = 0.0 if values.suite_passed else 1.0
        return (missing, completeness, gate, desc(values.suite_final_score))
    value = ranking_value(rule, values)
    return (1.0 if value is None else 0.0, completeness, desc(value))
