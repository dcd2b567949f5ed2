"""ProjectScylla per-run metrics (spec 003): pass rate, cost, cost of pass, composite, grade."""

from __future__ import annotations

import math

from evalq.core.profile import Price, ScyllaProfile
from evalq.core.results import ScyllaScores
from evalq.core.weights import weighted_mean

THRESHOLD_TOLERANCE = 1e-9
"""A score this close below a grade threshold still reaches it (floating-point rounding)."""


def pass_rate(passed: bool | None) -> float | None:
    """1.0 for a run that passed all its tests, 0.0 for one that did not, None when unknown (the
    run reported no ``passed`` flag and its task has no criteria to decide it)."""
    if passed is None:
        return None
    return 1.0 if passed else 0.0


def cost_usd(input_tokens: int, output_tokens: int, price: Price) -> float:
    """Dollar cost of a run: tokens times the model's per-million-token prices.

    Args:
        input_tokens: prompt tokens, >= 0.
        output_tokens: completion tokens, >= 0.
        price: the model's prices in dollars per million tokens (``Profile.pricing``).

    Raises:
        ValueError: a negative token count.
    """
    if input_tokens < 0 or output_tokens < 0:
        raise ValueError("cost_usd: token counts must be >= 0")
    return (input_tokens * price.input_per_mtok + output_tokens * price.output_per_mtok) / 1e6


def cost_of_pass(cost: float, pass_rate: float) -> float:
    """Expected dollars per passing run: ``cost / pass_rate``; ``math.inf`` when it never passes.

    Raises:
        ValueError: a negative or non-finite cost, or a pass rate outside [0, 1].
    """
    if not math.isfinite(cost) or cost < 0:
        raise ValueError("cost_of_pass: cost must be finite and >= 0")
    if not 0.0 <= pass_rate <= 1.0:
        raise ValueError("cost_of_pass: pass_rate must be in [0, 1]")
    return math.inf if pass_rate == 0 else cost / pass_rate


def composite(
    pass_rate: float | None, impl_rate: float | None, profile: ScyllaProfile
) -> float | None:
    """Weighted mean of pass rate and implementation rate, weights divided by their sum.

    When ``impl_rate`` is None (no judge score) the weights are renormalised over the pass rate
    alone, so the composite equals the pass rate; None only when no weighted part is present
    (``pass_weight`` is 0 and ``impl_rate`` is None). The result is clamped to [0, 1].
    """
    for name, value in (("pass_rate", pass_rate), ("impl_rate", impl_rate)):
        if value is not None and not 0.0 <= value <= 1.0:
            raise ValueError(f"composite: {name} must be in [0, 1]")
    mean = weighted_mean(
        {"pass_rate": pass_rate, "impl_rate": impl_rate},
        {"pass_rate": profile.pass_weight, "impl_rate": profile.impl_weight},
    ).value
    return None if mean is None else min(1.0, max(0.0, mean))


def letter_grade(score: float, profile: ScyllaProfile) -> str:
    """The highest grade whose threshold ``score`` reaches; "F" below every threshold.

    Thresholds come from ``profile.grades`` (A >= 0.95, B >= 0.85, C >= 0.75, D >= 0.65 by
    default); a score within 1e-9 below a threshold counts as reaching it.

    Raises:
        ValueError: ``score`` is NaN or outside [0, 1].
    """
    if not (math.isfinite(score) and 0.0 <= score <= 1.0):
        raise ValueError(f"letter_grade: score must be in [0, 1], got {score!r}")
    for grade, threshold in sorted(profile.grades.items(), key=lambda item: -item[1]):
        if score >= threshold - THRESHOLD_TOLERANCE:
            return grade
    return "F"


def score_scylla_run(
    *,
    passed: bool | None,
    impl_rate: float | None,
    cost_usd: float | None,
    duration_seconds: float | None,
    profile: ScyllaProfile,
    variant: str = "T0",
    run_index: int | None = None,
) -> ScyllaScores:
    """Compute every per-run Scylla metric of one run, in its stored form.

    Args:
        passed: did the run pass all its tests.
        impl_rate: the judge's weighted score in [0, 1], None when no judge scored the run.
        cost_usd: the run's dollar cost (given, or priced with `cost_usd` / ``Profile.price``).
        duration_seconds: end time minus start time, >= 0, or None.
        profile: the ``scylla`` section of the scoring profile.
        variant: the variant the run belongs to (T0, the baseline, when it named none).
        run_index: its index among the variant's runs, when given.

    Returns:
        The run's stored scores: pass rate (1.0 / 0.0, None when ``passed`` is), `composite`
        and its letter grade (None only if nothing weighted is present), the cost and the
        `cost_of_pass` (infinite when failed; None without a cost), duration, variant and index.
    """
    if duration_seconds is not None and not (
        math.isfinite(duration_seconds) and duration_seconds >= 0
    ):
        raise ValueError("score_scylla_run: duration_seconds must be finite and >= 0")
    rate = pass_rate(passed)
    score = composite(rate, impl_rate, profile)
    return ScyllaScores(
        passed=passed,
        pass_rate=rate,
        impl_rate=impl_rate,
        composite=score,
        grade=None if score is None else letter_grade(score, profile),
        cost_usd=cost_usd,
        cost_of_pass=None if cost_usd is None or rate is None else cost_of_pass(cost_usd, rate),
        duration_seconds=duration_seconds,
        variant=variant,
        run_index=run_index,
    )
