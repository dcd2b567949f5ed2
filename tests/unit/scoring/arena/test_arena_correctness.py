"""Success criteria: every type really checked, pass and fail; unknown types rejected."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from evalq.core import schemas  # TestsPass / TestResult by name would be collected by pytest
from evalq.core.errors import InvalidInput
from evalq.core.schemas import Evidence, FileExists, MinFunctionality, NoErrors, Task, parse_task
from evalq.scoring.arena import check_criterion, correctness_score, evaluate_criterion


def evidence(**fields: Any) -> Evidence:
    return Evidence.model_validate(fields)


def reported(*results: tuple[str, bool]) -> list[dict[str, Any]]:
    return [{"name": name, "passed": passed} for name, passed in results]


def test_file_exists() -> None:
    criterion = FileExists(type="file_exists", file_path="src/app.py")
    assert check_criterion(criterion, evidence(files_created=["README.md", "src/app.py"]))
    assert not check_criterion(criterion, evidence(files_created=["src/app2.py"]))
    assert not check_criterion(criterion, evidence())


def test_no_errors() -> None:
    criterion = NoErrors(type="no_errors")
    assert check_criterion(criterion, evidence())
    assert not check_criterion(criterion, evidence(success=False))
    # success claimed but an error was reported: fails
    assert not check_criterion(criterion, evidence(errors=["Traceback ..."]))


def test_tests_pass_all_reported() -> None:
    criterion = schemas.TestsPass(type="tests_pass")
    assert check_criterion(criterion, evidence(tests=reported(("a", True), ("b", True))))
    assert not check_criterion(criterion, evidence(tests=reported(("a", True), ("b", False))))


def test_tests_pass_with_no_tests_reported_fails() -> None:
    outcome = evaluate_criterion(schemas.TestsPass(type="tests_pass"), evidence())
    assert not outcome.passed
    assert outcome.reason == "no tests reported"


def test_tests_pass_named() -> None:
    criterion = schemas.TestsPass(type="tests_pass", tests=["a", "c"])
    # b fails but is not named
    assert check_criterion(
        criterion, evidence(tests=reported(("a", True), ("b", False), ("c", True)))
    )
    # c named but not reported
    missing = evaluate_criterion(criterion, evidence(tests=reported(("a", True), ("b", True))))
    assert not missing.passed and missing.reason == "not reported: c"
    # a reported twice, once failing: fails
    assert not check_criterion(
        criterion, evidence(tests=reported(("a", True), ("a", False), ("c", True)))
    )


@pytest.mark.parametrize(
    ("results", "rate", "passed"),
    [
        ([("a", True), ("b", True), ("c", False)], 0.5, True),  # 2 / 3 >= 0.5
        ([("a", True), ("b", False), ("c", False)], 0.5, False),  # 1 / 3 < 0.5
        ([("a", True), ("b", False)], 0.5, True),  # 1 / 2 = 0.5, at the boundary
        ([("a", True), ("b", True), ("c", False)], 0.7, False),  # 0.667 < 0.7
        ([("a", False)], 0.0, True),  # 0 >= 0
    ],
)
def test_min_functionality(results: list[tuple[str, bool]], rate: float, passed: bool) -> None:
    criterion = MinFunctionality(type="min_functionality", min_pass_rate=rate)
    assert check_criterion(criterion, evidence(tests=reported(*results))) is passed


def test_min_functionality_with_no_tests_reported_fails() -> None:
    criterion = MinFunctionality(type="min_functionality", min_pass_rate=0.0)
    outcome = evaluate_criterion(criterion, evidence())
    assert not outcome.passed and outcome.reason == "no tests reported"


def test_unknown_criterion_type_is_an_error() -> None:
    with pytest.raises(InvalidInput) as error:
        check_criterion(SimpleNamespace(type="code_compiles"), evidence())  # type: ignore[arg-type]
    assert "code_compiles" in str(error.value)
    # and a task cannot even be defined with one
    with pytest.raises(InvalidInput):
        parse_task(
            {"id": "t1", "category": "debugging", "success_criteria": [{"type": "code_compiles"}]}
        )


def task(*criteria: dict[str, Any]) -> Task:
    return Task.model_validate(
        {"id": "t1", "category": "debugging", "success_criteria": list(criteria)}
    )


def test_no_criteria_scores_100() -> None:
    result = correctness_score(task(), evidence(success=False))
    assert result.score == 100.0 and result.outcomes == ()


def test_pass_rate_times_100_with_outcomes_in_order() -> None:
    t = task(
        {"type": "file_exists", "file_path": "a.py"},
        {"type": "no_errors"},
        {"type": "tests_pass"},
    )
    result = correctness_score(t, evidence(files_created=["a.py"], tests=reported(("x", False))))
    # file_exists passes, no_errors passes, tests_pass fails: 2 / 3 * 100 = 66.667
    assert result.score == pytest.approx(200 / 3)
    assert [(o.type, o.passed) for o in result.outcomes] == [
        ("file_exists", True),
        ("no_errors", True),
        ("tests_pass", False),
    ]
    assert result.outcomes[2].reason == "failed: x"


def test_test_result_model_is_the_schema_one() -> None:
    # Guards the helper above: TestResult is what Evidence.tests holds.
    assert isinstance(evidence(tests=reported(("a", True))).tests[0], schemas.TestResult)
