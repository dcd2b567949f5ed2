"""`evalq gate` over the Scylla example: T0 (the prompt alone) against T3 is a seeded
regression; a variant whose scores equal its baseline's passes; two runs a side are too few."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from sqlalchemy import select, update
from tests.support.settings import configure
from typer.testing import CliRunner

from evalq.core.errors import InvalidInput
from evalq.producer.cli import app
from evalq.read import served
from evalq.store.db import session_scope
from evalq.store.models import EvaluationRow, SubmissionRow

TASK = "scylla-token-bucket"


@pytest.fixture
def copy(store: str, tmp_path: Path) -> str:
    """A copy of the examples' store this test may change, made with SQLite's backup (a copy
    of the file alone would miss what its write-ahead log still holds)."""
    with (
        closing(sqlite3.connect(store.removeprefix("sqlite:///"))) as source,
        closing(sqlite3.connect(tmp_path / "evalq.db")) as target,
    ):
        source.backup(target)
    return f"sqlite:///{tmp_path / 'evalq.db'}"


def _runs(session: object, variant: str) -> dict[int, SubmissionRow]:
    # evaluated runs only, in a fixed order: the shared store may hold other runs of a variant
    # (a copy, a run still queued) under the same run index
    rows = session.scalars(  # type: ignore[attr-defined]
        select(SubmissionRow)
        .join(EvaluationRow, EvaluationRow.submission_id == SubmissionRow.id)
        .where(SubmissionRow.task_id == TASK, SubmissionRow.variant == variant)
        .order_by(SubmissionRow.id.desc())
    )
    return {row.run_index: row for row in rows}


def _gate(url: str, tmp_path: Path, *args: str) -> tuple[int, str, ET.Element]:
    junit = tmp_path / "gate.xml"
    junit.unlink(missing_ok=True)
    with pytest.MonkeyPatch.context() as monkeypatch:
        configure(monkeypatch, database_url=url)
        result = CliRunner().invoke(
            app, ["gate", TASK, "--by", "variant", *args, "--junit", str(junit)]
        )
    root = ET.parse(junit).getroot() if junit.exists() else ET.Element("none")
    return result.exit_code, result.output, root


def _check_junit(root: ET.Element) -> None:
    """The structure CI systems read (Jenkins' and GitLab's JUnit schema): testsuites >
    testsuite (name, tests, failures) > testcase (name, classname) > failure (message)."""
    assert root.tag == "testsuites"
    for suite in root:
        assert suite.tag == "testsuite"
        assert {"name", "tests", "failures", "errors", "skipped"} <= set(suite.attrib)
        cases = list(suite)
        assert int(suite.attrib["tests"]) == len(cases)
        failed = [c for c in cases if c.find("failure") is not None]
        assert int(suite.attrib["failures"]) == len(failed)
        for case in cases:
            assert case.tag == "testcase" and case.attrib["name"] and case.attrib["classname"]
            for child in case:
                assert child.tag in ("failure", "skipped", "system-out")
                if child.tag == "failure":
                    assert child.attrib["message"] and child.attrib["type"]


def test_a_seeded_regression_exits_1_with_a_junit_failure_naming_the_task(
    store: str, tmp_path: Path
) -> None:
    status, output, root = _gate(store, tmp_path, "--baseline", "T3", "--candidate", "T0")
    assert status == 1, output
    _check_junit(root)
    (case,) = root.iter("testcase")
    failure = case.find("failure")
    assert case.attrib["name"] == TASK and failure is not None
    message = failure.attrib["message"]
    assert message.startswith(f"{TASK}: ") and "interval [" in message
    with session_scope(store) as session:
        report = served.gate_report(
            session, tasks=TASK, by="variant", baseline="T3", candidate="T0"
        )
    (task,) = report.tasks
    assert task.difference is not None and task.difference < 0 and task.high is not None
    assert task.adjusted_p is not None and task.adjusted_p <= 0.05
    # the interval in the message is the deciding test inverted: it excludes 0 with it
    assert task.high < 0 and "95% interval" in message
    assert f"{task.difference:+.4g}" in message and f"{task.high:+.4g}" in message
    # a margin wider than the drop lets it pass
    margin = str(-task.difference + 0.01)
    status, output, _ = _gate(
        store, tmp_path, "--baseline", "T3", "--candidate", "T0", "--margin", margin
    )
    assert status == 0, output


def test_a_candidate_scored_as_its_baseline_passes(copy: str, tmp_path: Path) -> None:
    with session_scope(copy) as session:
        t0, t1 = _runs(session, "T0"), _runs(session, "T1")
        for index, row in t1.items():
            scores = session.scalar(
                select(EvaluationRow.scores).where(EvaluationRow.submission_id == t0[index].id)
            )
            scylla = dict(scores["scylla"], variant="T1")
            session.execute(
                update(EvaluationRow)
                .where(EvaluationRow.submission_id == row.id)
                .values(scores=dict(scores, scylla=scylla))
            )
    status, output, root = _gate(copy, tmp_path, "--baseline", "T0", "--candidate", "T1")
    assert status == 0, output
    _check_junit(root)
    assert next(root.iter("testcase")).find("failure") is None
    with session_scope(copy) as session:
        report = served.gate_report(
            session, tasks=TASK, by="variant", baseline="T0", candidate="T1"
        )
    assert report.verdict == "pass" and report.tasks[0].difference == 0


def test_two_runs_a_side_are_too_few_exit_3_unless_told_to_pass(copy: str, tmp_path: Path) -> None:
    # the other runs move to a group not gated
    with session_scope(copy) as session:
        for variant in ("T0", "T3"):
            ids = [row.id for i, row in _runs(session, variant).items() if i >= 2]
            session.execute(
                update(SubmissionRow).where(SubmissionRow.id.in_(ids)).values(variant="T9")
            )
    status, output, root = _gate(copy, tmp_path, "--baseline", "T3", "--candidate", "T0")
    assert status == 3, output
    assert "too few" in output
    _check_junit(root)
    failure = next(root.iter("testcase")).find("failure")
    assert failure is not None and failure.attrib["type"] == "too few"
    status, output, root = _gate(
        copy, tmp_path, "--baseline", "T3", "--candidate", "T0", "--too-few", "pass"
    )
    assert status == 0, output
    assert next(root.iter("testcase")).find("skipped") is not None


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--baseline", "T0", "--candidate", "T0"], "candidate"),
        (["--baseline", "T0", "--candidate", "T9"], "values"),
        (["--baseline", "T0", "--candidate", "T1", "--margin", "-1"], "margin"),
        # an infinite margin would pass any regression (the fifth probe, G-8)
        (["--baseline", "T0", "--candidate", "T1", "--margin", "inf"], "margin"),
        (["--baseline", "T0", "--candidate", "T1", "--margin", "1e999"], "margin"),
        (["--baseline", "T0", "--candidate", "T1", "--margin", "nan"], "margin"),
    ],
)
def test_unusable_input_exits_2_naming_the_field(
    store: str, tmp_path: Path, args: list[str], named: str
) -> None:
    status, output, _ = _gate(store, tmp_path, *args)
    assert status == 2
    assert f"{named}:" in output
    with session_scope(store) as session, pytest.raises(InvalidInput) as raised:
        served.gate_report(
            session,
            tasks=TASK,
            by="variant",
            baseline=args[1],
            candidate=args[3],
            margin=float(args[5]) if len(args) > 4 else 0.0,
        )
    assert named in str(raised.value)
