"""Suite gates: blocking and warning thresholds, pass criteria, required scenarios (spec 004)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from evalq.core.profile import SuiteProfile
from evalq.core.schemas import ScenarioResult
from evalq.scoring.suite.aggregate import SuiteMetrics
from evalq.scoring.suite.scenario import reaches, scenario_passed


def below(
    rates: Mapping[str, float | None], minimums: Mapping[str, float], label: str
) -> tuple[str, ...]:
    """One message per rate under its minimum; a None (not applicable) rate never fails.

    Raises:
        ValueError: a threshold names something that is not a rate in ``rates``.
    """
    unknown = sorted(set(minimums) - set(rates))
    if unknown:
        raise ValueError(f"suite.{label}: unknown metric(s) {unknown}")
    messages = []
    for name, minimum in minimums.items():
        value = rates[name]
        if value is not None and not reaches(value, minimum):
            messages.append(f"{label}: {name} {value:.4f} is below {minimum:.4f}")
    return tuple(messages)


def pass_criteria_failures(m: SuiteMetrics, profile: SuiteProfile) -> tuple[str, ...]:
    """Overall and per-category pass-rate criteria; a category with no scenario is skipped."""
    rates: dict[str, float | None] = {"overall": m.pass_rate}
    minimums: dict[str, float] = {"overall": profile.overall_pass_rate}
    for category, minimum in profile.category_pass_rates.items():
        rates[category] = m.category_pass_rates.get(category)
        minimums[category] = minimum
    return below(rates, minimums, "pass_criteria")


def required_status(
    scenarios: Sequence[ScenarioResult], required: Sequence[str], profile: SuiteProfile
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(required ids with no result, required ids whose scenario failed), in ``required`` order."""
    by_id = {s.id: s for s in scenarios}
    wanted = list(dict.fromkeys(required))
    missing = tuple(i for i in wanted if i not in by_id)
    failed = tuple(i for i in wanted if i in by_id and not scenario_passed(by_id[i], profile))
    return missing, failed


def latency_warning(m: SuiteMetrics, profile: SuiteProfile) -> tuple[str, ...]:
    """A warning when the p95 latency exceeds ``profile.latency_budget_ms`` (docs/scoring.md)."""
    if m.latency_p95_ms is None or m.latency_p95_ms <= profile.latency_budget_ms:
        return ()
    budget = profile.latency_budget_ms
    return (f"warning: latency_p95 {m.latency_p95_ms:g} ms exceeds budget {budget:g} ms",)
