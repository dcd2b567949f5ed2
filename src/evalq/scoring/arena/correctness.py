"""Correctness score (spec 000, "Correctness Score"): the task's success criteria, really checked.

The spec passes ``min_functionality`` and every unknown criterion type unconditionally. Here
(docs/scoring/arena.md) each type in `evalq.core.schemas.Criterion` has a real check against the
run's `Evidence`, and anything else is an `InvalidInput`. The rules:

- ``file_exists``: ``file_path`` is in ``evidence.files_created`` (exact string match).
- ``no_errors``: ``evidence.success`` is true and ``evidence.errors`` is empty.
- ``tests_pass``: with names, each named test was reported and every report of it passed; without
  names, at least one test was reported and all passed ("no tests reported" fails: nothing shows
  the tests pass).
- ``min_functionality``: at least one test was reported and the fraction passed is at least
  ``min_pass_rate`` ("no tests reported" fails for the same reason).
"""

from __future__ import annotations

from dataclasses import dataclass

from evalq.core.errors import InvalidInput
from evalq.core.results import CriterionRecord
from evalq.core.schemas import (
    Criterion,
    Evidence,
    FileExists,
    MinFunctionality,
    NoErrors,
    Task,
    TestsPass,
)

NO_CRITERIA_SCORE = 100.0
"""Correctness of a task that defines no criteria (the spec's value)."""


@dataclass(frozen=True)
class CorrectnessResult:
    """Pass rate x 100 over the task's criteria, with each criterion's outcome in task order."""

    score: float
    outcomes: tuple[CriterionRecord, ...]


def evaluate_criterion(criterion: Criterion, evidence: Evidence) -> CriterionRecord:
    """Check one criterion against the evidence and say why it passed or failed.

    Raises:
        InvalidInput: ``criterion`` is not one of the criterion types evalq knows.
    """
    if isinstance(criterion, FileExists):
        passed = criterion.file_path in evidence.files_created
        reason = f"{criterion.file_path!r} {'' if passed else 'not '}created"
        return CriterionRecord(type=criterion.type, passed=passed, reason=reason)
    if isinstance(criterion, NoErrors):
        passed = evidence.success and not evidence.errors
        reason = (
            "completed without errors"
            if passed
            else f"success={evidence.success}, {len(evidence.errors)} error(s) reported"
        )
        return CriterionRecord(type=criterion.type, passed=passed, reason=reason)
    if isinstance(criterion, TestsPass):
        return _tests_pass(criterion, evidence)
    if isinstance(criterion, MinFunctionality):
        return _min_functionality(criterion, evidence)
    kind = getattr(criterion, "type", type(criterion).__name__)
    raise InvalidInput([("success_criteria.type", f"unknown criterion type {kind!r}")])


def check_criterion(criterion: Criterion, evidence: Evidence) -> bool:
    """Whether the evidence meets ``criterion`` (see `evaluate_criterion` for the rules)."""
    return evaluate_criterion(criterion, evidence).passed


def correctness_score(task: Task, evidence: Evidence) -> CorrectnessResult:
    """``100 * passed / len(task.success_criteria)``; 100 when the task has no criteria (spec)."""
    outcomes = tuple(evaluate_criterion(c, evidence) for c in task.success_criteria)
    if not outcomes:
        return CorrectnessResult(NO_CRITERIA_SCORE, outcomes)
    passed = sum(1 for outcome in outcomes if outcome.passed)
    return CorrectnessResult(100.0 * passed / len(outcomes), outcomes)


def _tests_pass(criterion: TestsPass, evidence: Evidence) -> CriterionRecord:
    if not evidence.tests:
        return CriterionRecord(type=criterion.type, passed=False, reason="no tests reported")
    if not criterion.tests:
        failed = sorted({t.name for t in evidence.tests if not t.passed})
        reason = f"failed: {', '.join(failed)}" if failed else "all reported tests passed"
        return CriterionRecord(type=criterion.type, passed=not failed, reason=reason)
    reported = {t.name for t in evidence.tests}
    failed_names = {t.name for t in evidence.tests if not t.passed}
    absent = [name for name in criterion.tests if name not in reported]
    failed = [name for name in criterion.tests if name in failed_names]
    if absent or failed:
        parts = [f"not reported: {', '.join(absent)}"] if absent else []
        parts += [f"failed: {', '.join(failed)}"] if failed else []
        return CriterionRecord(type=criterion.type, passed=False, reason="; ".join(parts))
    return CriterionRecord(type=criterion.type, passed=True, reason="all named tests passed")


def _min_functionality(criterion: MinFunctionality, evidence: Evidence) -> CriterionRecord:
    if not evidence.tests:
        return CriterionRecord(type=criterion.type, passed=False, reason="no tests reported")
    rate = sum(1 for t in evidence.tests if t.passed) / len(evidence.tests)
    passed = rate >= criterion.min_pass_rate
    sign = ">=" if passed else "<"
    reason = f"pass rate {rate:.3f} {sign} {criterion.min_pass_rate}"
    return CriterionRecord(type=criterion.type, passed=passed, reason=reason)
