"""Scoring one scenario of a suite (spec 004, "Per-scenario calculation", "Scenario weights")."""

from __future__ import annotations

from evalq.core.profile import SuiteProfile
from evalq.core.schemas import ScenarioResult

TOLERANCE = 1e-9
"""A value this close below a threshold still reaches it (floating-point rounding)."""


def reaches(value: float, threshold: float) -> bool:
    """``value >= threshold``, forgiving rounding noise up to `TOLERANCE`."""
    return value >= threshold - TOLERANCE


def behavior_counts(s: ScenarioResult) -> tuple[int, int]:
    """(expected behaviours observed, expected behaviours), both counted as distinct names.

    Observed behaviours that were not expected do not count, so coverage cannot exceed 1.
    """
    expected = set(s.expected_behaviors)
    return len(expected & set(s.observed_behaviors)), len(expected)


def scenario_score(s: ScenarioResult) -> float:
    """0.0 with any must-not violation, else the fraction of expected behaviours observed.

    A scenario that expects no behaviour scores 1.0 unless it broke a must-not rule: it has
    nothing to miss. (Spec 004 divides by zero there.)
    """
    if s.must_not_violations:
        return 0.0
    observed, expected = behavior_counts(s)
    return 1.0 if expected == 0 else observed / expected


def scenario_passed(s: ScenarioResult, profile: SuiteProfile) -> bool:
    """A scenario passes when its score reaches ``profile.scenario_pass_threshold``."""
    return reaches(scenario_score(s), profile.scenario_pass_threshold)


def scenario_weight(s: ScenarioResult, profile: SuiteProfile) -> float:
    """The category weight times the capability weight of a scenario.

    A category or capability the profile does not weigh, and a scenario without a capability,
    contribute a factor of 1. With the defaults an adversarial core-function scenario weighs
    2.0 x 2.0 = 4.0 and a happy-path convenience feature 1.0 x 0.5 = 0.5.
    """
    weight = profile.category_weights.get(s.category, 1.0)
    if s.capability is not None:
        weight *= profile.capability_weights.get(s.capability, 1.0)
    return weight
