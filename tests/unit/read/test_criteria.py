"""A task's success criteria against a run's evidence (`evalq.read.criteria`)."""

from __future__ import annotations

import json

from evalq.core.schemas import Evidence, Submission, Task
from evalq.producer.cli import EXAMPLES
from evalq.read.criteria import CriteriaCheck, EvidenceItem, check_criteria


def bundled(run_id: str) -> tuple[Task, Submission]:
    """A bundled Arena run and its task."""
    lines = (EXAMPLES / "arena.jsonl").read_text().splitlines()
    run = Submission.model_validate(next(json.loads(x) for x in lines if run_id in x))
    tasks = json.loads((EXAMPLES / "tasks.json").read_text())
    task = Task.model_validate(next(t for t in tasks if t["id"] == run.task_id))
    return task, run


def test_arena_fe_11s_failed_header_test_is_shown_though_every_criterion_is_met() -> None:
    # correctness 100: the criteria name three tests that passed; the header test, which the
    # run's own output says fails, is named by none of them
    task, run = bundled("arena-fe-11")
    check = check_criteria(task, run.evidence)
    assert check is not None
    assert [(c.criterion, c.state) for c in check.criteria] == [
        ("file src/components/ThemeToggle.tsx exists", "met"),
        (
            "tests pass: ThemeToggle.test.tsx > renders a switch with an accessible label, "
            "ThemeToggle.test.tsx > toggles data-theme on the html element, "
            "ThemeToggle.test.tsx > persists the choice in localStorage",
            "met",
        ),
        ("the run completes without errors", "met"),
    ]
    assert check.unclaimed == [
        EvidenceItem(kind="test", name="Header.test.tsx > renders the theme toggle", failed=True),
        EvidenceItem(
            kind="test",
            name="ThemeToggle.test.tsx > follows prefers-color-scheme on first visit",
            failed=False,
        ),
        EvidenceItem(kind="file", name="src/hooks/useTheme.ts", failed=False),
    ]
    assert check.unclaimed_failures == 1


def test_a_criterion_without_evidence_is_told_apart_from_one_the_evidence_contradicts() -> None:
    task = Task.model_validate(
        {
            "id": "t",
            "success_criteria": [
                {"type": "tests_pass", "tests": ["a", "b"]},
                {"type": "tests_pass", "tests": ["c"]},
                {"type": "file_exists", "file_path": "x.py"},
                {"type": "min_functionality", "min_pass_rate": 0.9},
            ],
        }
    )
    evidence = Evidence.model_validate(
        {"tests": [{"name": "a", "passed": True}, {"name": "c", "passed": False}]}
    )
    check = check_criteria(task, evidence)
    assert check is not None
    assert [c.state for c in check.criteria] == ["no evidence", "not met", "no evidence", "not met"]
    assert check.unclaimed == []  # min_functionality reads every test
    nothing = check_criteria(task, Evidence())
    assert nothing is not None
    assert [c.state for c in nothing.criteria] == ["no evidence"] * 4


def test_errors_and_a_failed_run_no_criterion_reads_are_flagged() -> None:
    task = Task.model_validate(
        {"id": "t", "success_criteria": [{"type": "file_exists", "file_path": "a"}]}
    )
    evidence = Evidence.model_validate(
        {"files_created": ["a"], "errors": ["boom"], "success": False}
    )
    check = check_criteria(task, evidence)
    assert check == CriteriaCheck(
        criteria=check.criteria if check else [],
        unclaimed=[
            EvidenceItem(kind="error", name="boom", failed=True),
            EvidenceItem(kind="success", name="success: false", failed=True),
        ],
    )
    assert check is not None and [c.state for c in check.criteria] == ["met"]


def test_no_criteria_and_no_evidence_is_nothing_to_show() -> None:
    assert check_criteria(Task(id="t"), Evidence()) is None
