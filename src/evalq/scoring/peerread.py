"""The PeerRead composite score and its recommendation (spec 001, "Composite Scoring")."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evalq.core.profile import PeerReadProfile, Recommendation
from evalq.core.schemas import PEERREAD_INPUTS
from evalq.core.weights import weighted_mean

_TOLERANCE = 1e-9
"""Floating-point slack: an input or score this far outside its bound is still accepted."""


@dataclass(frozen=True)
class PeerReadScore:
    """A PeerRead composite and what went into it.

    Attributes:
        composite: weighted mean of the present inputs in [0, 1]; None when none is present.
        recommendation: the label the composite maps to; None with the composite.
        recommendation_weight: that label's weight (1.0, 0.7, -0.7, -1.0); None with it.
        used: names of the inputs that contributed.
        missing: names of weighted inputs that were absent (a tier failed, or the input does
            not apply to the task); the composite is renormalised over the rest.
        inputs: the inputs as given.
        not_reported: inputs the submitter did not report, counted as the worst value (0).
    """

    composite: float | None
    recommendation: Recommendation | None
    recommendation_weight: float | None
    used: tuple[str, ...]
    missing: tuple[str, ...]
    inputs: dict[str, float | None] = field(default_factory=dict)
    not_reported: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict (tuples become lists)."""
        return {
            "composite": self.composite,
            "recommendation": self.recommendation,
            "recommendation_weight": self.recommendation_weight,
            "used": list(self.used),
            "missing": list(self.missing),
            "inputs": dict(self.inputs),
            "not_reported": list(self.not_reported),
        }


def recommendation(
    score: float,
    profile: PeerReadProfile,
) -> tuple[Recommendation, float]:
    """Map a composite in [0, 1] to (label, weight) with the profile's thresholds.

    accept at ``profile.accept`` (0.8) or above, weak_accept at ``weak_accept`` (0.6),
    weak_reject at ``weak_reject`` (0.4), reject below. A score within 1e-9 below a threshold
    counts as reaching it, so rounding in the weighted mean cannot drop a label. The label's
    weight is ``profile.recommendation_weights`` (spec 001: 1.0, 0.7, -0.7, -1.0).
    """
    label: Recommendation
    if score >= profile.accept - _TOLERANCE:
        label = "accept"
    elif score >= profile.weak_accept - _TOLERANCE:
        label = "weak_accept"
    elif score >= profile.weak_reject - _TOLERANCE:
        label = "weak_reject"
    else:
        label = "reject"
    return label, profile.recommendation_weights[label]


def peerread_composite(
    inputs: Mapping[str, float | None],
    profile: PeerReadProfile,
    *,
    not_reported: tuple[str, ...] = (),
) -> PeerReadScore:
    """Weighted mean of the six PeerRead metrics, renormalised over those present.

    Every input must already be normalised to [0, 1] by the tier that produced it. In
    particular ``time_taken`` arrives as ``1 / (1 + ln(1 + t))`` from tier 1 and is *not*
    normalised again here (spec 001's ``1 / (1 + log t)`` is replaced, DESIGN.md). The weights
    (``profile.weights``) are divided by their sum, so six weights of 0.167 give a plain mean.
    An absent input (None or not given) is left out and named in ``missing``: the caller decides
    which inputs count as the worst value instead (`evalq.scoring.evaluation` passes 0 for an
    input the submitter did not report, and names it in ``not_reported``). Inputs without a
    weight are ignored.

    Args:
        inputs: input name (one of `PEERREAD_INPUTS`) -> normalised value in [0, 1], or None.
        profile: the ``peerread`` section of the scoring profile.
        not_reported: the inputs given as 0 because the submitter did not report them.

    Raises:
        ValueError: an unknown input name, or a value that is not a finite number in [0, 1].
    """
    unknown = sorted(set(inputs) - set(PEERREAD_INPUTS))
    if unknown:
        raise ValueError(
            f"peerread_composite: unknown input(s) {', '.join(map(repr, unknown))}; "
            f"the inputs are {', '.join(PEERREAD_INPUTS)}"
        )
    for name, value in inputs.items():
        if value is not None and not (
            math.isfinite(value) and -_TOLERANCE <= value <= 1 + _TOLERANCE
        ):
            raise ValueError(f"peerread input {name!r} must be in [0, 1], got {value!r}")
    mean = weighted_mean(inputs, profile.weights)
    if mean.value is None:
        return PeerReadScore(None, None, None, mean.used, mean.missing, dict(inputs), not_reported)
    score = min(1.0, max(0.0, mean.value))
    label, weight = recommendation(score, profile)
    return PeerReadScore(score, label, weight, mean.used, mean.missing, dict(inputs), not_reported)
