"""'not validated' wherever the judge's scores are shown: the board, a run's detail, the
comparison and the report, through the client and the CLI (SQLite and PostgreSQL)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.settings import configure
from typer.testing import CliRunner

from evalq.core.results import JudgeResult, PanelMember, RubricResult, TierOutcome
from evalq.core.schemas import Submission
from evalq.core.settings import Settings
from evalq.producer.cli import app as cli
from evalq.read.baseline import current_baseline
from evalq.read.boards import projector
from evalq.read.view import TaskContext
from evalq.scoring.evaluation import evaluate_submission
from evalq.service.client import Client
from evalq.store import queries
from evalq.store.db import session_scope

TRUTH = [1, 2, 3, 4, 5, 2, 3, 4]
STRICT = "[judge]\nmin_labels = 5\n"


def judged(step: int) -> TierOutcome:
    """Judge a scores the person's step, judge b always 3."""
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


def evaluated_task(client: Client, task_id: str, profile: str) -> None:
    """A task whose runs were judged and merged (as `tasks/merge.py` merges them)."""
    client.put_task({"id": task_id, "category": "data_analysis", "profile": profile})
    with session_scope(client.url) as session:
        for i, step in enumerate(TRUTH):
            sid = f"{task_id}-{i}"
            run = Submission(
                id=sid,
                task_id=task_id,
                tool="agent",
                model=f"m{i % 2}",
                usage={"input_tokens": 10 + i, "output_tokens": 5},
                output=f"review {i}",
            )
            queries.add_submission(session, submission=run, cost_usd=None)
            queries.finish_tier(session, submission_id=sid, outcome=judged(step))
            for tier in ("text", "graph"):
                skipped = TierOutcome(tier=tier, status="skipped", reason="not applicable")
                queries.finish_tier(session, submission_id=sid, outcome=skipped)
            job = queries.load_job(session, submission_id=sid, settings=client.settings)
            tiers = {
                o.tier: o
                for o in map(
                    queries.tier_outcome, queries.tier_results(session, submission_id=sid).values()
                )
                if o is not None
            }
            base = current_baseline(session, task_id=task_id, profile=job.profile)
            result = evaluate_submission(
                job.submission, job.task, tiers, base.baseline, job.profile, cost_usd=None
            )
            queries.save_evaluation(
                session,
                submission_id=sid,
                task_id=task_id,
                status=result.status,
                scores=result.scores,
                missing_tiers=result.missing,
                baseline_version=base.version,
                profile_hash=job.profile.hash,
            )
            queries.set_status(session, submission_id=sid, status=result.status, error=None)
            # the merge's projection: its standing and the task's judged-run tallies
            stored = queries.evaluations_of(session, submission_ids=[sid])[sid]
            contexts = {task_id: TaskContext(job.task, job.profile, base)}
            projector.project_runs(session, contexts, [stored])
    client.add_labels(
        [
            {
                "submission_id": f"{task_id}-{i}",
                "labeller": "ann",
                "scores": {"constructiveness": s},
            }
            for i, s in enumerate(TRUTH)
        ]
    )


@pytest.fixture
def client(db_url: str, tmp_path: Path) -> Client:
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "strict.toml").write_text(STRICT)
    client = Client(Settings(database_url=db_url, profile_dir=profiles))
    evaluated_task(client, "few", "default")
    evaluated_task(client, "enough", "strict")
    return client


def test_every_view_of_judge_scores_says_whether_they_are_validated(
    client: Client, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    few = client.leaderboard("few")["judge_validation"]
    assert few["status"] == "not validated"
    assert [(r["model"], r["validated"]) for r in few["rubrics"]] == [("a", False), ("b", False)]
    assert "8 labelled pairs, the profile asks for 30" in few["rubrics"][0]["note"]
    enough = client.leaderboard("enough")["judge_validation"]
    assert [(r["model"], r["validated"]) for r in enough["rubrics"]] == [("a", True), ("b", False)]
    assert enough["status"] == "not validated"  # b is not
    assert enough["rubrics"][0]["alpha"] == 1.0
    detail = client.get_result("enough-3")
    assert detail["judge_validation"] == enough
    compared = client.compare("few,enough", by="model", values=["m0", "m1"])
    pooled = compared["judge_validation"]["rubrics"]
    assert [(r["task_id"], r["model"], r["pairs"]) for r in pooled] == [
        (None, "a", 16),
        (None, "b", 16),
    ]
    configure(monkeypatch, database_url=client.url, profile_dir=str(client.settings.profile_dir))
    board = CliRunner().invoke(cli, ["leaderboard", "few"])
    assert board.exit_code == 0, board.output
    assert "judge scores: not validated against people's labels" in board.output
    assert "constructiveness / a: alpha 1.00" in board.output
    page = tmp_path / "r.html"
    written = CliRunner().invoke(cli, ["report", "enough", "-o", str(page)])
    assert written.exit_code == 0, written.output
    html = page.read_text()
    assert "judge scores: not validated" in html and "validated: alpha 1.00 over 8" in html


def test_the_ui_board_compare_and_run_pages_say_it_as_the_api_does(client: Client) -> None:
    from fastapi.testclient import TestClient
    from tests.support.ui import sign_in

    from evalq.producer.api.app import create_app
    from evalq.store.keys import create_key

    with session_scope(client.url) as session:
        key = create_key(session, name="reader", scopes=["read"])
    settings = client.settings.model_copy(update={"auth_required": True})
    with TestClient(create_app(settings), base_url="https://testserver") as browser:
        signed = sign_in(browser, key)
        assert signed.status_code == 303, signed.text
        board = browser.get("/ui/tasks/few")
        assert board.status_code == 200, board.text
        assert "judge scores: not validated against people&#x27;s labels" in board.text
        assert "constructiveness / a: alpha 1.00" in board.text
        compared = browser.get(
            "/ui/compare", params={"tasks": "few,enough", "by": "model", "values": ["m0", "m1"]}
        )
        assert compared.status_code == 200, compared.text
        assert "judge scores: not validated against people&#x27;s labels" in compared.text
        run = browser.get("/ui/runs/enough-3")
        assert run.status_code == 200, run.text
        assert "judge scores: not validated against people&#x27;s labels" in run.text
        assert "constructiveness / a: alpha 1.00" in run.text
