"""The store's reads and writes, on SQLite and on the running PostgreSQL."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import func, inspect, select

from evalq.core.errors import Conflict, InvalidInput
from evalq.core.profile import Profile
from evalq.core.results import EvaluationScores, GraphResult, PriceSource, TierOutcome
from evalq.core.schemas import Submission, Task
from evalq.scoring.arena import compute_baseline
from evalq.scoring.evaluation import evaluate_submission
from evalq.store import queries
from evalq.store.db import engine_for, migrations_config, session_scope
from evalq.store.models import EvaluationRow, SubmissionRow, TierResultRow, utcnow

pytestmark = pytest.mark.both_databases  # the database matters here (tests/conftest.py)

TASK = Task(id="t1", category="debugging")
GRAPH_OK = TierOutcome(
    tier="graph", status="ok", result=GraphResult(path_convergence=0.5, central_agent="a")
)


def scores_of(sub: Submission) -> EvaluationScores:
    """What a merge of ``sub`` with no tier results stores."""
    profile = Profile()
    baseline = compute_baseline([], profile.arena)
    return evaluate_submission(sub, TASK, {}, baseline, profile, cost_usd=None).scores


def submission(sid: str = "s1", tokens: int = 100) -> Submission:
    return Submission.model_validate(
        {
            "id": sid,
            "task_id": "t1",
            "tool": "aider",
            "model": "gpt-4o",
            "usage": {"total_tokens": tokens, "tool_calls": 3},
        }
    )


@pytest.fixture
def url(db_url: str) -> str:
    with session_scope(db_url) as session:
        queries.put_task(session, task=TASK)
    return db_url


def count(url: str, model: type) -> int:
    with session_scope(url) as session:
        return int(session.scalar(select(func.count()).select_from(model)) or 0)


def test_same_submission_twice_is_stored_once(url: str) -> None:
    with session_scope(url) as session:
        assert queries.add_submission(session, submission=submission(), cost_usd=None)
    with session_scope(url) as session:
        assert not queries.add_submission(session, submission=submission(), cost_usd=None)
    assert count(url, SubmissionRow) == 1


def test_same_id_with_other_content_is_a_conflict(url: str) -> None:
    with session_scope(url) as session:
        queries.add_submission(session, submission=submission(), cost_usd=None)
    with pytest.raises(Conflict, match="different content"), session_scope(url) as session:
        queries.add_submission(session, submission=submission(tokens=101), cost_usd=None)
    with session_scope(url) as session:
        stored = queries.get_submission_row(session, submission_id="s1")
        assert stored.total_tokens == 100


def test_unknown_task_is_invalid_and_nothing_is_stored(url: str) -> None:
    other = submission().model_copy(update={"task_id": "nope"})
    with (
        pytest.raises(InvalidInput, match="task_id: unknown task 'nope'"),
        session_scope(url) as session,
    ):
        queries.add_submission(session, submission=other, cost_usd=None)
    assert count(url, SubmissionRow) == 0


def test_concurrent_deliveries_are_counted_exactly(url: str) -> None:
    with session_scope(url) as session:
        queries.add_submission(session, submission=submission(), cost_usd=None)

    def deliver(_: int) -> int:
        with session_scope(url) as session:
            return queries.start_tier(session, submission_id="s1", tier="text").deliveries

    with ThreadPoolExecutor(8) as pool:
        seen = sorted(pool.map(deliver, range(16)))
    assert seen[-1] == 16  # every delivery counted once, no lost update
    assert count(url, TierResultRow) == 1


def test_a_finished_tier_stays_final_on_redelivery(url: str) -> None:
    with session_scope(url) as session:
        queries.add_submission(session, submission=submission(), cost_usd=None)
        queries.start_tier(session, submission_id="s1", tier="graph")
        queries.finish_tier(session, submission_id="s1", outcome=GRAPH_OK)
    with session_scope(url) as session:
        again = queries.start_tier(session, submission_id="s1", tier="graph")
    assert again.already_final and again.deliveries == 2
    with session_scope(url) as session:
        rows = queries.tier_results(session, submission_id="s1")
        assert rows["graph"].status == "ok"
        assert queries.tier_outcome(rows["graph"]) == GRAPH_OK


def test_evaluation_upsert_replaces_and_counts_merges(url: str) -> None:
    with session_scope(url) as session:
        queries.add_submission(session, submission=submission(), cost_usd=None)
    first = scores_of(submission())
    second = first.model_copy(update={"judge": {"technical_accuracy": 0.5}})
    for scores in (first, second):
        with session_scope(url) as session:
            queries.save_evaluation(
                session,
                submission_id="s1",
                task_id="t1",
                status="done",
                scores=scores,
                missing_tiers={},
                baseline_version=0,
                profile_hash="h",
            )
    assert count(url, EvaluationRow) == 1
    with session_scope(url) as session:
        row = queries.get_evaluation(session, submission_id="s1")
        assert row is not None and row.merge_count == 2
        assert EvaluationScores.model_validate(row.scores) == second


def test_rankings_read_done_and_degraded_submissions_but_not_failed_ones(url: str) -> None:
    for sid, status in (("s1", "done"), ("s2", "degraded"), ("s3", "failed"), ("s4", "queued")):
        with session_scope(url) as session:
            queries.add_submission(session, submission=submission(sid), cost_usd=None)
            if sid == "s4":
                continue  # not merged yet: no evaluation to rank
            queries.save_evaluation(
                session,
                submission_id=sid,
                task_id="t1",
                status=status,
                scores=scores_of(submission(sid)),
                missing_tiers={},
                baseline_version=0,
                profile_hash="h",
            )
            queries.set_status(session, submission_id=sid, status=status)
    with session_scope(url) as session:
        ranked = [row.id for row, _ in queries.task_evaluations(session, task_id="t1")]
    assert ranked == ["s1", "s2"]


def test_refresh_is_debounced_per_task(url: str) -> None:
    with session_scope(url) as session:
        assert queries.claim_refresh(session, task_id="t1")
    with session_scope(url) as session:
        assert not queries.claim_refresh(session, task_id="t1")
        queries.release_refresh(session, task_id="t1")
    with session_scope(url) as session:
        assert queries.claim_refresh(session, task_id="t1")


def test_baseline_versions_increase(url: str) -> None:
    with session_scope(url) as session:
        assert queries.current_baseline(session, task_id="t1") is None
        assert queries.add_baseline(session, task_id="t1", data={"a": 1}, submission_count=5) == 1
        assert queries.add_baseline(session, task_id="t1", data={"a": 2}, submission_count=6) == 2
    with session_scope(url) as session:
        latest = queries.current_baseline(session, task_id="t1")
        assert latest is not None and latest.version == 2 and latest.data == {"a": 2}


def test_stuck_submissions_are_found_by_age(url: str) -> None:
    with session_scope(url) as session:
        queries.add_submission(session, submission=submission("old"), cost_usd=None)
        queries.add_submission(session, submission=submission("new"), cost_usd=None)
        queries.set_status(session, submission_id="new", status="done")
    with session_scope(url) as session:
        assert queries.stuck_submissions(session, older_than=timedelta(seconds=3600)) == []
        assert queries.stuck_submissions(session, older_than=timedelta(seconds=-1)) == ["old"]


def test_first_use_of_a_new_sqlite_store_from_many_threads(tmp_path: Path) -> None:
    # The worker's threads all open their first session together; the store migrates once.
    url = f"sqlite:///{tmp_path / 'fresh.db'}"

    def first_session(_: int) -> int:
        with session_scope(url) as session:
            return int(session.scalar(select(func.count()).select_from(SubmissionRow)) or 0)

    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(first_session, range(8))) == [0] * 8


def claimed(url: str, sid: str, tier: str, owner: str | None, seconds_ago: float) -> None:
    """Tier ``tier`` of ``sid`` started by ``owner`` ``seconds_ago`` and still running."""
    with session_scope(url) as session:
        queries.start_tier(session, submission_id=sid, tier=tier, owner=owner)  # type: ignore[arg-type]
        row = session.get(TierResultRow, (sid, tier))
        assert row is not None
        row.updated_at = utcnow() - timedelta(seconds=seconds_ago)


def test_a_tier_records_the_worker_that_started_it_until_it_is_final(url: str) -> None:
    with session_scope(url) as session:
        queries.add_submission(session, submission=submission(), cost_usd=None)
    claimed(url, "s1", "graph", "a@host/1", 0)
    claimed(url, "s1", "graph", "b@host/2", 0)  # redelivered to another worker: it owns it now
    with session_scope(url) as session:
        assert queries.tier_results(session, submission_id="s1")["graph"].owner == "b@host/2"
        queries.finish_tier(session, submission_id="s1", outcome=GRAPH_OK)
    claimed(url, "s1", "graph", "c@host/3", 0)  # already final: who ran it stays recorded
    with session_scope(url) as session:
        assert queries.tier_results(session, submission_id="s1")["graph"].owner == "b@host/2"


def test_running_tiers_are_those_claimed_long_enough_ago_by_a_known_worker(url: str) -> None:
    with session_scope(url) as session:
        for sid in ("old", "fresh", "anonymous", "finished", "done"):
            queries.add_submission(session, submission=submission(sid), cost_usd=None)
    claimed(url, "old", "text", "a@host/1", 120)
    claimed(url, "fresh", "text", "a@host/1", 5)
    claimed(url, "anonymous", "text", None, 120)  # an embedded worker: left to the age rule
    claimed(url, "finished", "graph", "a@host/1", 120)
    with session_scope(url) as session:
        queries.finish_tier(session, submission_id="finished", outcome=GRAPH_OK)
    claimed(url, "done", "text", "a@host/1", 120)
    with session_scope(url) as session:
        queries.set_status(session, submission_id="done", status="done")
    with session_scope(url) as session:
        running = queries.running_tiers(session, older_than=timedelta(seconds=60))
    assert running == [queries.RunningTier("old", "text", "a@host/1")]


def test_migration_0005_goes_down_and_up_again_with_tiers_stored(url: str) -> None:
    with session_scope(url) as session:
        queries.add_submission(session, submission=submission(), cost_usd=None)
    claimed(url, "s1", "text", "a@host/1", 0)

    def migrate(step: str, revision: str) -> set[str]:
        engine = engine_for(url)
        with engine.begin() as connection:
            config = migrations_config()
            config.attributes["connection"] = connection
            getattr(command, step)(config, revision)
        engine.dispose()  # SQLite: drop cached connections that saw the old table
        return {column["name"] for column in inspect(engine).get_columns("tier_results")}

    assert "owner" not in migrate("downgrade", "0004")
    assert "owner" in migrate("upgrade", "head")
    with session_scope(url) as session:
        row = queries.tier_results(session, submission_id="s1")["text"]
        assert (row.status, row.owner) == ("running", None)  # came back empty: the age rule


def test_the_price_source_is_stored_at_submit_and_loaded_with_the_job(url: str) -> None:
    source = PriceSource(origin="genai-prices", entry="openai:gpt-4o", version="0.0.1")
    with session_scope(url) as session:
        queries.add_submission(session, submission=submission(), cost_usd=0.25, priced_by=source)
        queries.add_submission(session, submission=submission("s2"), cost_usd=None)
    with session_scope(url) as session:
        job = queries.load_job(session, submission_id="s1")
        assert (job.cost_usd, job.priced_by) == (0.25, source)
        assert queries.load_job(session, submission_id="s2").priced_by is None


def test_migration_0007_goes_down_and_up_again_with_a_price_source_stored(url: str) -> None:
    source = PriceSource(origin="reported")
    with session_scope(url) as session:
        queries.add_submission(session, submission=submission(), cost_usd=0.5, priced_by=source)

    def migrate(step: str, revision: str) -> set[str]:
        engine = engine_for(url)
        with engine.begin() as connection:
            config = migrations_config()
            config.attributes["connection"] = connection
            getattr(command, step)(config, revision)
        engine.dispose()
        return {column["name"] for column in inspect(engine).get_columns("submissions")}

    assert "priced_by" not in migrate("downgrade", "0006")
    assert "priced_by" in migrate("upgrade", "head")
    with session_scope(url) as session:
        job = queries.load_job(session, submission_id="s1")
        assert (job.cost_usd, job.priced_by) == (0.5, None)  # an old row: the merge re-prices


def test_migration_0008_hashes_the_runs_already_stored(url: str) -> None:
    first = submission()
    copy = first.model_copy(update={"id": "s1-copy", "metadata": {"note": "resent"}})
    with session_scope(url) as session:
        for run in (first, copy):
            queries.add_submission(session, submission=run, cost_usd=None)
        stored = {
            row.id: (row.run_hash, row.output_hash)
            for row in session.query(SubmissionRow).order_by(SubmissionRow.id)
        }
    assert stored["s1"] == stored["s1-copy"] and stored["s1"][0] is not None

    def migrate(step: str, revision: str) -> None:
        engine = engine_for(url)
        with engine.begin() as connection:
            config = migrations_config()
            config.attributes["connection"] = connection
            getattr(command, step)(config, revision)
        engine.dispose()

    migrate("downgrade", "0007")
    migrate("upgrade", "head")  # computed again from the stored payloads
    with session_scope(url) as session:
        again = {
            row.id: (row.run_hash, row.output_hash)
            for row in session.query(SubmissionRow).order_by(SubmissionRow.id)
        }
    assert again == stored
