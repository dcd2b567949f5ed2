"""The PeerRead composite score and its recommendation (spec 001, "Composite Scoring")."""

from __future__ import annotations

import math
from collections.abc import Mapping

from evalq.core.profile import PeerReadProfile, Recommendation
from evalq.core.results import PeerReadScores
from evalq.core.schemas import PEERREAD_INPUTS
from evalq.core.weights import weighted_mean

_TOLERANCE = 1e-9
"""Floating-point slack: an input or score this far outside its bound is still accepted."""


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
) -> PeerReadScores:
    """Weighted mean of the six PeerRead metrics, renormalised over those present.

    Every input must already be normalised to [0, 1] by the tier that produced it. In
    particular ``time_taken`` arrives as ``1 / (1 + ln(1 + t))`` from tier 1 and is *not*
    normalised again here (spec 001's ``1 / (1 + log t)`` is replaced, docs/scoring.md). The weights
    (``profile.weights``) are divided by their sum, so six weights of 0.167 give a plain mean.
    An absent input (None or not given) is left out and named in ``missing``: the caller decides
    which inputs count as the worst value instead (`evalq.scoring.evaluation` passes 0 for an
    input the submitter did not report, and names it in ``not_reported``). Inputs without a
    weight are ignored.

    Args:
        inputs: input name (one of `PEERREAD_INPUTS`) -> normalised value in [0, 1], or None.
        profile: the ``peerread`` section of the scoring profile.
        not_reported: the inputs given as 0 because the submitter did not report them.

    Returns:
        The composite (None when no input is present) with its recommendation label and weight,
        the inputs ``used`` and ``missing``, the inputs as given and ``not_reported``; the
        caller (`evalq.scoring.evaluation`) adds what only the whole evaluation knows
        (``partial``, the raw similarity, the note).

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
    score: float | None = None
    label: Recommendation | None = None
    weight: float | None = None
    if mean.value is not None:
        score = min(1.0, max(0.0, mean.value))
        label, weight = recommendation(score, profile)
    return PeerReadScores(
        composite=score,
        recommendation=label,
        recommendation_weight=weight,
        used=mean.used,
        missing=mean.missing,
        inputs=dict(inputs),
        not_reported=not_reported,
    )
