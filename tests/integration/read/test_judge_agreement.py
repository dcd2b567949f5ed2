"""Judge-human agreement read from the store (each panel member on its own), through the client
and `evalq judge agreement`, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from tests.support.settings import configure
from tests.unit.judge.judge_helpers import submission
from typer.testing import CliRunner

from evalq.core.errors import InvalidInput
from evalq.core.results import JudgeResult, PanelMember, RubricResult, TierOutcome
from evalq.core.schemas import Task
from evalq.core.settings import Settings
from evalq.producer.cli import app as cli
from evalq.service.client import Client
from evalq.store import queries
from evalq.store.db import session_scope

TRUTH = [1, 2, 3, 4, 5, 2, 3, 4]


def panel_outcome(step: int) -> TierOutcome:
    """Member a scores the person's step; member b always 3."""
    a = RubricResult(rubric="constructiveness", status="ok", score=(step - 1) / 4)
    b = RubricResult(rubric="constructiveness", status="ok", score=0.5)
    result = JudgeResult(
        model="a",
        scores={"constructiveness": a.score},
        failed=False,
        rubrics=(a,),
        panel=(PanelMember(model="a", rubrics=(a,)), PanelMember(model="b", rubrics=(b,))),
    )
    return TierOutcome(tier="judge", status="ok", result=result)


def test_agreement_per_panel_member(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with session_scope(db_url) as session:
        queries.put_task(session, task=Task(id="t1", category="data_analysis"))
        for i, step in enumerate(TRUTH):
            sid = f"r{i}"
            queries.add_submission(session, submission=submission(id=sid), cost_usd=None)
            queries.finish_tier(session, submission_id=sid, outcome=panel_outcome(step))
    client = Client(Settings(database_url=db_url))
    client.add_labels(
        [
            {"submission_id": f"r{i}", "labeller": "ann", "scores": {"constructiveness": step}}
            for i, step in enumerate(TRUTH)
        ]
    )
    report = client.judge_agreement("t*")
    assert report.tasks == ["t1"] and report.min_labels == 30
    by_model = {entry.model: entry for entry in report.rubrics}
    assert by_model["a"].alpha == 1.0 and by_model["a"].pairs == len(TRUTH)
    assert by_model["b"].alpha is not None and by_model["b"].alpha < 0.2
    assert not by_model["a"].validated  # 8 pairs; the default profile asks for 30
    assert "8 labelled pairs, the profile asks for 30" in by_model["a"].note
    with pytest.raises(InvalidInput) as caught:
        client.judge_agreement("nothing-*")
    assert [f for f, _ in caught.value.problems] == ["tasks"]
    configure(monkeypatch, database_url=db_url)
    shown = CliRunner().invoke(cli, ["judge", "agreement", "t1"])
    assert shown.exit_code == 0, shown.output
    assert "not validated" in shown.output and "1.00" in shown.output
    as_json = CliRunner().invoke(cli, ["judge", "agreement", "t1", "--json"])
    assert '"validated": false' in as_json.output
