"""The suite entry point: metrics, final score, gates and the pass decision (spec 004)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from evalq.core.profile import SuiteProfile
from evalq.core.schemas import ScenarioResult
from evalq.scoring.suite.aggregate import SuiteMetrics, suite_metrics
from evalq.scoring.suite.gates import (
    below,
    latency_warning,
    pass_criteria_failures,
    required_status,
)
from evalq.scoring.suite.scenario import reaches
from evalq.scoring.suite.score import final_score


@dataclass(frozen=True)
class SuiteResult:
    """The evaluation of one suite run.

    Attributes:
        metrics: every suite metric (`SuiteMetrics`).
        final_score: the weighted final score in [0, 1]; None when no part of it applies.
        final_used / final_missing: the final score's parts that applied / did not.
        passed: True exactly when ``blocking_failures`` is empty.
        blocking_failures: every reason the suite failed.
        warnings: reasons to review a suite that may still pass.
        missing_required / failed_required: required scenario ids absent / failed.
    """

    metrics: SuiteMetrics
    final_score: float | None
    final_used: tuple[str, ...]
    final_missing: tuple[str, ...]
    passed: bool
    blocking_failures: tuple[str, ...]
    warnings: tuple[str, ...]
    missing_required: tuple[str, ...]
    failed_required: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict (tuples become lists)."""
        data = asdict(self)
        for key, value in data.items():
            if isinstance(value, tuple):
                data[key] = list(value)
        return data


def evaluate_suite(
    scenarios: Sequence[ScenarioResult], required: Sequence[str], profile: SuiteProfile
) -> SuiteResult:
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
    return SuiteResult(
        metrics=m,
        final_score=final.value,
        final_used=final.used,
        final_missing=final.missing,
        passed=not blocking,
        blocking_failures=tuple(blocking),
        warnings=warnings,
        missing_required=missing,
        failed_required=failed,
    )
