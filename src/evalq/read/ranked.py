"""The number a run's board ranks it by, and the rule that makes it, for a run's page.

Each kind ranks by its own score (`evalq.scoring.kinds`): an Arena board by the Arena overall
before the difficulty factor, a PeerRead board by the PeerRead composite, a Scylla board by the
Scylla composite (variants by their median), a suite board by the gate and then the final score.
`ranked_by` names that number for one run with the weights that make it, read from the run's
stored scores and the task's profile, so "why this score" is the board's own reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalq.core.profile import Profile
from evalq.core.results import EvaluationScores
from evalq.scoring.kinds import KINDS


@dataclass(frozen=True)
class Part:
    """One weighted part of the ranked number: its name, weight (divided by the sum of the
    weights of the parts present) and the run's value of it (None: absent, left out)."""

    name: str
    weight: float | None
    value: float | None


@dataclass(frozen=True)
class RankedBy:
    """The number the run's board ranks it by.

    Attributes:
        key: the board's ranking key (the column the board sorts by).
        label: that number in words.
        value: the run's value of it (None: the run has none, it ranks last).
        rule: how the number is made, in one sentence.
        parts: the weighted parts, in the profile's order.
        missing: weighted parts the run lacks, left out of the mean.
        gate: a suite run's gate (passed or blocked) that ranks before the number; None for the
            other kinds.
        digits: decimals the number is shown with (the board's: 2 on the Arena's 0-100).
    """

    key: str
    label: str
    value: float | None
    rule: str
    parts: tuple[Part, ...]
    missing: tuple[str, ...] = ()
    gate: bool | None = None
    digits: int = 3


def _suite_parts(metrics: dict[str, Any]) -> dict[str, float | None]:
    """The parts a suite's final score weighs, from its stored metrics: the rates as stored and
    ``latency`` = 1 - normalized latency (as `evalq.scoring.suite.score.final_parts`)."""
    parts: dict[str, float | None] = {
        k: float(v) for k, v in metrics.items() if isinstance(v, int | float) and k != "latency"
    }
    latency = metrics.get("normalized_latency")
    parts["latency"] = None if latency is None else 1.0 - latency
    return parts


def _shares(weights: dict[str, float], present: tuple[str, ...]) -> dict[str, float]:
    """Each present part's weight divided by the sum of the present parts' weights."""
    total = sum(weights.get(name, 0.0) for name in present)
    return {name: weights.get(name, 0.0) / total for name in present} if total > 0 else {}


def ranked_by(scores: EvaluationScores, profile: Profile) -> RankedBy:
    """What the board of the kind ``scores.kind`` ranks this run by, with its weights."""
    key = KINDS[scores.kind].ranking_key
    if scores.kind == "peerread" and scores.peerread is not None:
        p = scores.peerread
        shares = _shares(profile.peerread.weights, p.used)
        return RankedBy(
            key=key,
            label="PeerRead composite",
            value=p.composite,
            rule="weighted mean of the PeerRead inputs present (0-1), weights divided by their "
            f"sum; accept from {profile.peerread.accept:g}, weak accept from "
            f"{profile.peerread.weak_accept:g}, weak reject from {profile.peerread.weak_reject:g}",
            parts=tuple(Part(n, shares.get(n), p.inputs.get(n)) for n in p.used),
            missing=p.missing,
        )
    if scores.kind == "scylla" and scores.scylla is not None:
        s = scores.scylla
        weights = {"pass_rate": profile.scylla.pass_weight, "impl_rate": profile.scylla.impl_weight}
        values = {"pass_rate": s.pass_rate, "impl_rate": s.impl_rate}
        present = tuple(n for n in weights if values[n] is not None and weights[n] > 0)
        shares = _shares(weights, present)
        return RankedBy(
            key=key,
            label="Scylla composite",
            value=s.composite,
            rule="weighted mean of the pass rate and the judge's implementation rate (0-1), "
            "weights divided by their sum (without a judge score: the pass rate); the board "
            f"ranks variants by their median composite; this run is variant {s.variant}",
            parts=tuple(Part(n, shares.get(n), values[n]) for n in present),
            missing=tuple(n for n in weights if n not in present and weights[n] > 0),
        )
    if scores.kind == "suite" and scores.suite is not None:
        g = scores.suite
        parts = _suite_parts(g.metrics)
        shares = _shares(profile.suite.final_weights, g.final_used)
        return RankedBy(
            key=key,
            label="suite gate, then final score",
            value=g.final_score,
            rule="runs that pass the gate rank above blocked ones; within each, by the final "
            "score: weighted mean of the parts present (0-1), weights divided by their sum "
            "(latency counts as 1 - p95 / budget)",
            parts=tuple(Part(n, shares.get(n), parts.get(n)) for n in g.final_used),
            missing=g.final_missing,
            gate=g.passed,
        )
    a = scores.arena
    names = ("efficiency", "speed", "cost", "correctness")
    dimensions = {
        "efficiency": a.efficiency_score,
        "speed": a.speed_score,
        "cost": a.cost_score,
        "correctness": a.correctness_score,
    }
    return RankedBy(
        key=key,
        label="Arena overall",
        value=a.unadjusted_score,
        rule="weighted mean of the four Arena dimensions (0-100), weights divided by their sum, "
        "before the task's difficulty factor",
        parts=tuple(Part(n, a.breakdown.get(f"{n}_weight"), dimensions[n]) for n in names),
        digits=2,
    )
