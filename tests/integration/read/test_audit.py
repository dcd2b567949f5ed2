"""The verifier audit over the bundled examples: no bundled task is unverified; a task whose
criteria an empty output passes is, on its board (API, CLI, report) and in the gate, which
fails on it; and on both databases through PUT /v1/tasks/{id}."""

from __future__ import annotations

import sqlite3
import xml.etree.ElementTree as ET
from contextlib import closing
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from tests.support.settings import configure
from typer.testing import CliRunner

from evalq.core.schemas import Task
from evalq.core.settings import Settings
from evalq.producer.api.app import create_app
from evalq.producer.cli import EXAMPLES, app
from evalq.producer.files import read_tasks
from evalq.read import served
from evalq.read.audit import stored_audit
from evalq.read.boards.query import BoardQuery
from evalq.service.client import Client
from evalq.store.db import session_scope
from evalq.store.keys import create_key

SCYLLA = "scylla-token-bucket"


@pytest.fixture
def copy(store: str, tmp_path: Path) -> str:
    """A copy of the examples' store this test may change (SQLite's backup)."""
    with (
        closing(sqlite3.connect(store.removeprefix("sqlite:///"))) as source,
        closing(sqlite3.connect(tmp_path / "evalq.db")) as target,
    ):
        source.backup(target)
    return f"sqlite:///{tmp_path / 'evalq.db'}"


def _gate(url: str, tmp_path: Path) -> tuple[int, str, ET.Element]:
    junit = tmp_path / "gate.xml"
    junit.unlink(missing_ok=True)
    args = ["--baseline", "T3", "--candidate", "T0", "--margin", "1", "--junit", str(junit)]
    args += ["--markdown", str(tmp_path / "gate.md")]
    with pytest.MonkeyPatch.context() as monkeypatch:
        configure(monkeypatch, database_url=url)
        result = CliRunner().invoke(app, ["gate", SCYLLA, "--by", "variant", *args])
    return result.exit_code, result.output, ET.parse(junit).getroot()


def test_no_bundled_task_is_unverified_with_other_tasks_best_runs_as_probes(copy: str) -> None:
    client = Client(Settings(database_url=copy))
    found = {t.id: client.audit_task(t.id) for t in read_tasks(EXAMPLES / "tasks.json")}
    assert found.pop("suite-refund-agent").status == "not audited"
    for task_id, audit in found.items():
        assert audit.status == "verified", (task_id, audit.reason)
        borrowed = [p for p in audit.probes if p.probe == "another task's best run"]
        assert len(borrowed) == 3 and all(p.source for p in borrowed)
        assert {"empty output", "echoed task text", "refusal"} <= {p.probe for p in audit.probes}
    with session_scope(copy) as session:
        assert served.board(session, BoardQuery(task_id=SCYLLA)).verifier is None


def test_criteria_an_empty_output_passes_mark_the_task_and_fail_the_gate(
    copy: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    status, output, _ = _gate(copy, tmp_path)
    assert status == 0, output
    original = next(t for t in read_tasks(EXAMPLES / "tasks.json") if t.id == SCYLLA)
    weak = Task.model_validate(
        original.model_dump() | {"success_criteria": [{"type": "no_errors"}]}
    )
    client = Client(Settings(database_url=copy))
    client.put_task(weak)  # a changed definition is audited as it is stored
    with session_scope(copy) as session:
        audit = stored_audit(session, task_id=SCYLLA)
        board = served.board(session, BoardQuery(task_id=SCYLLA))
        report = served.report(session, task_id=SCYLLA)
        key = create_key(session, name="auditor", scopes=["read"])
    assert audit is not None and audit.status == "unverified"
    assert audit.passed[:3] == ["empty output", "echoed task text", "refusal"]
    assert board.verifier == f"unverified: {audit.reason}"
    assert "empty output" in board.verifier
    assert report.leaderboard.verifier == board.verifier
    settings = Settings(database_url=copy, auth_required=True)
    with TestClient(create_app(settings)) as http:
        headers = {"Authorization": f"Bearer {key}"}
        served_board = http.get(f"/v1/tasks/{SCYLLA}/leaderboard", headers=headers).json()
        served_audit = http.get(f"/v1/tasks/{SCYLLA}/audit", headers=headers).json()
    assert served_board["verifier"] == board.verifier
    assert served_audit == audit.model_dump(mode="json")
    configure(monkeypatch, database_url=copy)
    shown = CliRunner().invoke(app, ["leaderboard", SCYLLA])
    assert "task unverified: empty output" in " ".join(shown.output.split())
    status, output, junit = _gate(copy, tmp_path)
    assert status == 4, output
    case = next(junit.iter("testcase"))
    failure = case.find("failure")
    assert failure is not None and failure.attrib["type"] == "unverified"
    assert "### evalq gate: UNVERIFIED" in (tmp_path / "gate.md").read_text()
    # the criteria restored: audited again, verified, and the gate passes as before
    client.put_task(original)
    with session_scope(copy) as session:
        again = stored_audit(session, task_id=SCYLLA)
        assert again is not None and again.status == "verified"
        assert served.board(session, BoardQuery(task_id=SCYLLA)).verifier is None
    status, output, _ = _gate(copy, tmp_path)
    assert status == 0, output
    cli = CliRunner().invoke(app, ["task", "audit", SCYLLA])
    assert cli.exit_code == 0 and f"{SCYLLA}: verified" in cli.output
