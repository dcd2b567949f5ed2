"""A panel's agreement in a submission's detail (`evalq status ID`, GET /v1/submissions/{id})."""

from __future__ import annotations

from pathlib import Path

from tests.support.databases import migrate_store
from tests.unit.judge.judge_helpers import submission

from evalq.core.results import Agreement, JudgeResult, PanelMember, RubricResult, TierOutcome
from evalq.core.schemas import Task
from evalq.read.submission import SubmissionResult, submission_result
from evalq.store import queries
from evalq.store.db import session_scope


def judge_outcome(*, panel: bool) -> TierOutcome:
    rubric = RubricResult(rubric="constructiveness", status="ok", score=0.5)
    result = JudgeResult(
        model="judge-a", scores={"constructiveness": 0.5}, failed=False, rubrics=(rubric,)
    )
    if panel:
        members = tuple(PanelMember(model=m, rubrics=(rubric,)) for m in ("judge-a", "judge-b"))
        agreement = Agreement(alpha=0.229, units=3, members=2)
        result = result.model_copy(update={"panel": members, "agreement": agreement})
    return TierOutcome(tier="judge", status="ok", result=result)


def test_the_submission_detail_shows_the_panel_and_its_agreement(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'evalq.db'}"
    migrate_store(url)
    with session_scope(url) as session:
        queries.put_task(session, task=Task(id="t1", category="data_analysis"))
        for sid, panel in (("single", False), ("panel", True)):
            queries.add_submission(session, submission=submission(id=sid), cost_usd=None)
            queries.finish_tier(session, submission_id=sid, outcome=judge_outcome(panel=panel))
    with session_scope(url) as session:
        single = submission_result(session, submission_id="single").model_dump(mode="json")
        paneled = submission_result(session, submission_id="panel").model_dump(mode="json")
    judge = paneled["tiers"]["judge"]["metrics"]
    assert judge["agreement"] == {"alpha": 0.229, "units": 3, "members": 2}
    assert [m["model"] for m in judge["panel"]] == ["judge-a", "judge-b"]
    assert "agreement" not in single["tiers"]["judge"]["metrics"]
    assert "panel" not in single["tiers"]["judge"]["metrics"]
    served = SubmissionResult.model_validate(paneled)  # the API's body accepts it
    assert served.tiers["judge"].metrics == judge
