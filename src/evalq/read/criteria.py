"""A task's success criteria against one run's evidence, as a reader checks them: each criterion
met, not met, or without evidence, and the evidence no criterion names, marked when it reports
a failure.

The correctness score counts only the criteria (spec 000): a run whose evidence reports a failed
test the criteria do not name scores 100 on correctness. Showing that test beside the criteria
is what lets a reader see it. Each criterion's outcome and reason are the scorer's own
(`evalq.scoring.arena.correctness.evaluate_criterion`); "no evidence" is a criterion the scorer
fails because the run reported nothing it could be checked against (no tests, a named test not
reported, no files), told apart from one the evidence contradicts.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from evalq.core.schemas import (
    Criterion,
    Evidence,
    FileExists,
    MinFunctionality,
    NoErrors,
    Task,
    TestsPass,
)
from evalq.read.reply import Reply
from evalq.scoring.arena.correctness import evaluate_criterion

CriterionState = Literal["met", "not met", "no evidence"]
EvidenceKind = Literal["test", "file", "error", "success"]


class CriterionCheck(Reply):
    """One success criterion of the task against the run's evidence."""

    type: str
    criterion: str = Field(description="The criterion in words.")
    state: CriterionState = Field(
        description="met; not met (the evidence contradicts it); no evidence (the run reported "
        "nothing it can be checked against). Only 'met' counts for correctness."
    )
    reason: str = Field(description="The scorer's reason.")


class EvidenceItem(Reply):
    """One item of the run's evidence that no criterion of the task names."""

    kind: EvidenceKind
    name: str
    failed: bool = Field(description="True when the item reports a failure.")


class CriteriaCheck(Reply):
    """The task's success criteria against the run's evidence."""

    criteria: list[CriterionCheck] = Field(description="In the task's order.")
    unclaimed: list[EvidenceItem] = Field(
        description="Evidence no criterion names, failures first; not counted in correctness."
    )

    @property
    def unclaimed_failures(self) -> int:
        """How many unclaimed evidence items report a failure."""
        return sum(1 for item in self.unclaimed if item.failed)


def check_criteria(task: Task, evidence: Evidence) -> CriteriaCheck | None:
    """Each of ``task``'s success criteria against ``evidence``, and the evidence none names;
    None when the task has no criteria and the run reported no evidence."""
    reported = bool(evidence.tests or evidence.files_created or evidence.errors)
    if not task.success_criteria and not reported and evidence.success:
        return None
    checks = [_check(c, evidence) for c in task.success_criteria]
    return CriteriaCheck(criteria=checks, unclaimed=_unclaimed(task.success_criteria, evidence))


def _check(criterion: Criterion, evidence: Evidence) -> CriterionCheck:
    outcome = evaluate_criterion(criterion, evidence)
    state: CriterionState = "met" if outcome.passed else "not met"
    if not outcome.passed and _without_evidence(criterion, evidence):
        state = "no evidence"
    return CriterionCheck(
        type=criterion.type, criterion=_words(criterion), state=state, reason=outcome.reason
    )


def _without_evidence(criterion: Criterion, evidence: Evidence) -> bool:
    """Whether a failed criterion failed for want of evidence rather than against it."""
    if isinstance(criterion, FileExists):
        return not evidence.files_created
    if isinstance(criterion, TestsPass):
        failed = {t.name for t in evidence.tests if not t.passed}
        named = criterion.tests or [t.name for t in evidence.tests]
        return not evidence.tests or not failed.intersection(named)
    if isinstance(criterion, MinFunctionality):
        return not evidence.tests
    return False  # no_errors: the success flag and the errors are always evidence


def _words(criterion: Criterion) -> str:
    if isinstance(criterion, FileExists):
        return f"file {criterion.file_path} exists"
    if isinstance(criterion, NoErrors):
        return "the run completes without errors"
    if isinstance(criterion, TestsPass):
        named = ", ".join(criterion.tests)
        return f"tests pass: {named}" if criterion.tests else "every reported test passes"
    if isinstance(criterion, MinFunctionality):
        return f"at least {criterion.min_pass_rate:.0%} of the tests pass"
    return str(getattr(criterion, "type", criterion))


def _unclaimed(criteria: list[Criterion], evidence: Evidence) -> list[EvidenceItem]:
    """The evidence items no criterion names: tests outside every named list (unless a
    criterion reads every test), files no ``file_exists`` names, and the errors and success
    flag when no ``no_errors`` criterion reads them."""
    every_test = any(
        isinstance(c, MinFunctionality) or (isinstance(c, TestsPass) and not c.tests)
        for c in criteria
    )
    named_tests = {name for c in criteria if isinstance(c, TestsPass) for name in c.tests}
    named_files = {c.file_path for c in criteria if isinstance(c, FileExists)}
    reads_errors = any(isinstance(c, NoErrors) for c in criteria)
    items: list[EvidenceItem] = []
    if not every_test:
        items += [
            EvidenceItem(kind="test", name=t.name, failed=not t.passed)
            for t in evidence.tests
            if t.name not in named_tests
        ]
    items += [
        EvidenceItem(kind="file", name=path, failed=False)
        for path in evidence.files_created
        if path not in named_files
    ]
    if not reads_errors:
        items += [EvidenceItem(kind="error", name=e, failed=True) for e in evidence.errors]
        if not evidence.success:
            items.append(EvidenceItem(kind="success", name="success: false", failed=True))
    return sorted(items, key=lambda item: not item.failed)
