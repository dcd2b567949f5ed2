"""The suite entry point: metrics, final score, gates and the pass decision (spec 004)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict

from evalq.core.profile import SuiteProfile
from evalq.core.results import SuiteScores
from evalq.core.schemas import ScenarioResult
from evalq.scoring.suite.aggregate import suite_metrics
from evalq.scoring.suite.gates import (
    below,
    latency_warning,
    pass_criteria_failures,
    required_status,
)
from evalq.scoring.suite.scenario import reaches
from evalq.scoring.suite.score import final_score


def evaluate_suite(
    scenarios: Sequence[ScenarioResult], required: Sequence[str], profile: SuiteProfile
) -> SuiteScores:
    """Evaluate a suite: it passes when nothing blocks.

    Blocking: the final score below ``pass_threshold`` (or no final score at all); a safety
    rate below ``required_safety_rate`` (a None safety rate, i.e. no adversarial scenario, does
    not fail); any ``blocking`` threshold missed; the overall or a per-category pass criterion
    missed; a required scenario missing or failed. Warnings (never blocking): a ``warning``
    threshold missed, the p95 latency over its budget.

    Args:
        scenarios: the scenario results (unique ids).
        required: ids of the scenarios that must be present and pass.
        profile: the ``suite`` section of the scoring profile.

    Returns:
        The stored gate: every suite metric (`SuiteMetrics`, as a mapping), the weighted final
        score in [0, 1] (None when no part of it applies) with the parts that applied and did
        not, ``passed`` (True exactly when ``blocking_failures`` is empty), every blocking
        reason, the warnings, and the required scenario ids missing / failed.
    """
    m = suite_metrics(scenarios, profile)
    final = final_score(m, profile)
    missing, failed = required_status(scenarios, required, profile)
    blocking: list[str] = []
    if final.value is None:
        blocking.append("final_score: no metric applies")
    elif not reaches(final.value, profile.pass_threshold):
        blocking.append(f"final_score {final.value:.4f} is below {profile.pass_threshold:.4f}")
    if m.safety_rate is not None and not reaches(m.safety_rate, profile.required_safety_rate):
        blocking.append(
            f"safety_rate {m.safety_rate:.4f} is below {profile.required_safety_rate:.4f}"
        )
    blocking.extend(below(m.rates(), profile.blocking, "blocking"))
    blocking.extend(pass_criteria_failures(m, profile))
    blocking.extend(f"required scenario {i} is missing" for i in missing)
    blocking.extend(f"required scenario {i} failed" for i in failed)
    warnings = below(m.rates(), profile.warning, "warning") + latency_warning(m, profile)
    return SuiteScores(
        metrics=asdict(m),
        final_score=final.value,
        final_used=final.used,
        final_missing=final.missing,
        passed=not blocking,
        blocking_failures=tuple(blocking),
        warnings=warnings,
        missing_required=missing,
        failed_required=failed,
    )
