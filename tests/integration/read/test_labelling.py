"""The labelling queue's order and counts, and people's agreement where no judge scored: served
as the judge validation of the board and a run ('no judge scores'), and said on the UI's board
(SQLite and PostgreSQL)."""

from __future__ import annotations

import html

import pytest
from fastapi.testclient import TestClient
from tests.support.ui import sign_in

from evalq.core.errors import NotFound
from evalq.core.results import TierOutcome
from evalq.core.schemas import Submission
from evalq.core.settings import Settings
from evalq.judge.agreement import krippendorff_alpha
from evalq.producer.api.app import create_app
from evalq.read.baseline import current_baseline
from evalq.read.labelling import next_to_label
from evalq.scoring.evaluation import evaluate_submission
from evalq.service.client import Client
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.store.keys import create_key

RUNS = [("a1", "a"), ("a2", "a"), ("a3", "a"), ("b1", "b"), ("b2", "b")]
ANN = {"a1": 5, "a2": 2, "a3": 4}
BOB = {"a1": 4, "a2": 2, "a3": 1}


def evaluate(client: Client, run: Submission) -> None:
    """Store ``run`` and merge it as `tasks/merge.py` does, every tier skipped (no judge)."""
    with session_scope(client.url) as session:
        queries.add_submission(session, submission=run, cost_usd=None)
        for tier in ("text", "judge", "graph"):
            skipped = TierOutcome(tier=tier, status="skipped", reason="not applicable")
            queries.finish_tier(session, submission_id=run.id, outcome=skipped)
        job = queries.load_job(session, submission_id=run.id, settings=client.settings)
        tiers = {
            o.tier: o
            for o in map(
                queries.tier_outcome, queries.tier_results(session, submission_id=run.id).values()
            )
            if o is not None
        }
        base = current_baseline(session, task_id=run.task_id, profile=job.profile)
        result = evaluate_submission(
            job.submission, job.task, tiers, base.baseline, job.profile, cost_usd=None
        )
        queries.save_evaluation(
            session,
            submission_id=run.id,
            task_id=run.task_id,
            status=result.status,
            scores=result.scores,
            missing_tiers=result.missing,
            baseline_version=base.version,
            profile_hash=job.profile.hash,
        )
        queries.set_status(session, submission_id=run.id, status=result.status, error=None)


@pytest.fixture
def client(db_url: str) -> Client:
    """Tasks a (three runs) and b (two), evaluated; no judge scored them."""
    client = Client(Settings(database_url=db_url))
    for task in ("a", "b"):
        client.put_task({"id": task, "category": "debugging"})
    for i, (sid, tid) in enumerate(RUNS):
        run = Submission(
            id=sid,
            task_id=tid,
            tool="agent",
            model="m",
            usage={"input_tokens": 100 + i, "output_tokens": 20, "execution_time": 3},
            output=f"run {sid}",
        )
        evaluate(client, run)
    return client


def test_the_queue_goes_by_task_then_run_and_skips_forward(client: Client) -> None:
    with session_scope(client.url) as session:
        first = next_to_label(session)
        assert (first.submission_id, first.run_task_id, first.waiting) == ("a1", "a", 5)
        assert next_to_label(session, after="a3").submission_id == "b1"  # into the next task
        only_b = next_to_label(session, task_id="b", after="b1")
        assert (only_b.submission_id, only_b.waiting) == ("b2", 2)
        assert next_to_label(session, task_id="b", after="b2").submission_id is None
        with pytest.raises(NotFound):
            next_to_label(session, task_id="nope")
    client.add_label({"submission_id": "a1", "labeller": "ann", "passed": True})
    with session_scope(client.url) as session:
        after = next_to_label(session)
        assert (after.submission_id, after.waiting) == ("a2", 4)  # labelled by anyone: gone


def test_without_judge_scores_people_agreement_is_served_and_shown(client: Client) -> None:
    assert "judge_validation" not in client.leaderboard("a")  # nothing to say yet
    client.add_labels(
        [
            {"submission_id": run, "labeller": who, "scores": {"constructiveness": score}}
            for who, scores in (("ann", ANN), ("bob", BOB))
            for run, score in scores.items()
        ]
    )
    served = client.leaderboard("a")["judge_validation"]
    assert served["status"] == "no judge scores" and served["rubrics"] == []
    alpha = krippendorff_alpha([list(map(float, ANN.values())), list(map(float, BOB.values()))])
    assert alpha is not None
    assert served["people"] == [{"rubric": "constructiveness", "alpha": alpha, "runs": 3}]
    assert client.get_result("a2")["judge_validation"] == served
    assert "judge_validation" not in client.leaderboard("b")

    with session_scope(client.url) as session:
        key = create_key(session, name="reader", scopes=["read"])
    settings = client.settings.model_copy(update={"auth_required": True})
    with TestClient(create_app(settings), base_url="https://testserver") as browser:
        assert sign_in(browser, key).status_code == 303
        board = browser.get("/ui/tasks/a")
        assert board.status_code == 200, board.text
        said = html.unescape(board.text)  # one line, after the verdict
        assert "judge scores: none yet; people's labels agree among themselves" in said
        assert f"constructiveness / people: alpha {alpha:.2f} over 3 run(s)" in board.text
        quiet = browser.get("/ui/tasks/b")
        assert "no judge scored these runs and nobody labelled them" in quiet.text


def test_a_label_moves_the_versions_of_its_tasks_board_and_run_pages(client: Client) -> None:
    """The board and the run page show the task's agreement with people: a label added must
    move their ETags, or a browser revalidating its copy would keep the old figure."""
    from evalq.ui.freshness import version_of

    pages = ("/ui/tasks/a", "/ui/runs/a2", "/ui/tasks/b")
    with session_scope(client.url) as session:
        before = [version_of(session, page) for page in pages]
    client.add_label({"submission_id": "a1", "labeller": "ann", "scores": {"constructiveness": 3}})
    with session_scope(client.url) as session:
        after = [version_of(session, page) for page in pages]
    assert after[0] != before[0] and after[1] != before[1]
    assert after[2] == before[2]  # another task's board holds still
