"""Manual review: a run flagged for review is left out of its task's baseline until accepted."""

from __future__ import annotations

from typing import Any

import pytest
from alembic import command
from sqlalchemy import insert, inspect, select, update
from tests.support.stored_runs import arena_run, submission_columns

from evalq.core.errors import InvalidInput, NotFound
from evalq.core.profile import profile_named
from evalq.core.schemas import Task
from evalq.scoring.arena import compute_baseline
from evalq.store import queries
from evalq.store.baseline_sql import sql_baseline
from evalq.store.db import engine_for, migrations_config, session_scope
from evalq.store.models import EvaluationRow, SubmissionRow

pytestmark = pytest.mark.both_databases  # the database matters here (tests/conftest.py)

PROFILE = profile_named("default").arena.model_copy(
    update={"min_submissions": 1, "baseline": "runs"}
)  # spec 000's ranges: the held run's extremes would fall outside the robust default's band


def run(
    sid: str, *, task_id: str = "t1", tokens: int, calls: int, seconds: float, **extra: Any
) -> dict[str, Any]:
    """The columns of one evaluated submission."""
    return submission_columns(
        sid, task_id=task_id, tokens=tokens, calls=calls, seconds=seconds, **extra
    )


def store(url: str, *rows: dict[str, Any]) -> None:
    with session_scope(url) as session:
        for task_id in sorted({row["task_id"] for row in rows}):
            queries.put_task(session, task=Task(id=task_id, category="debugging"))
        session.execute(insert(SubmissionRow), list(rows))


def review_of(url: str, sid: str) -> tuple[str | None, object]:
    with session_scope(url) as session:
        row = queries.get_submission_row(session, submission_id=sid)
        return row.review, row.reviewed_at


def baseline(url: str, task_id: str = "t1") -> dict[str, Any]:
    with session_scope(url) as session:
        return sql_baseline(
            session, task_id=task_id, profile=PROFILE, last_updated="t"
        ).model_dump()


def pure_baseline(url: str, ids: set[str]) -> dict[str, Any]:
    """`compute_baseline` over exactly the submissions ``ids``."""
    with session_scope(url) as session:
        rows = session.scalars(select(SubmissionRow).where(SubmissionRow.id.in_(ids))).all()
        runs = [arena_run(row) for row in rows]
    return compute_baseline(runs, PROFILE, last_updated="t").model_dump()


ORDINARY = [
    run(f"s{i}", tokens=10_000 + 1_000 * i, calls=10 + i, seconds=60.0 + i) for i in range(7)
]


def test_a_flagged_run_is_left_out_of_the_baseline_until_accepted(db_url: str) -> None:
    store(db_url, *ORDINARY, run("cheat", tokens=5, calls=0, seconds=0.5))
    before = baseline(db_url)
    assert (before["min_tokens"], before["min_tool_calls"], before["min_execution_time"]) == (
        5,
        0,
        0.5,
    )
    with session_scope(db_url) as session:
        queries.flag_for_review(session, submission_id="cheat")

    flagged = baseline(db_url)
    assert flagged == pure_baseline(db_url, {row["id"] for row in ORDINARY})  # every figure
    assert (flagged["min_tokens"], flagged["min_tool_calls"], flagged["min_execution_time"]) == (
        10_000,
        10,
        60.0,
    )
    assert flagged["submission_count"] == len(ORDINARY)

    with session_scope(db_url) as session:
        queries.accept_review(session, submission_id="cheat")
    assert baseline(db_url) == before  # an accepted run counts again, as a never-flagged one


def test_a_flagged_run_with_the_largest_figures_moves_no_maximum_or_median(db_url: str) -> None:
    store(db_url, *ORDINARY, run("huge", tokens=9_000_000, calls=900, seconds=86_000.0))
    with session_scope(db_url) as session:
        queries.flag_for_review(session, submission_id="huge")
    result = baseline(db_url)
    assert result == pure_baseline(db_url, {row["id"] for row in ORDINARY})
    assert result["max_tokens"] == 16_000
    assert result["median_tokens"] == 13_000


def test_a_task_with_only_flagged_runs_has_the_default_baseline(db_url: str) -> None:
    store(db_url, run("only", tokens=5, calls=0, seconds=0.5))
    with session_scope(db_url) as session:
        queries.flag_for_review(session, submission_id="only")
    result = baseline(db_url)
    assert result["is_default"] is True
    assert result["submission_count"] == 0


def test_flagging_again_keeps_a_persons_acceptance(db_url: str) -> None:
    store(db_url, *ORDINARY[:2])
    with session_scope(db_url) as session:
        for sid in ("s0", "s1"):  # two runs of their own: migration 0008 hashes the payloads
            session.execute(
                update(SubmissionRow)
                .where(SubmissionRow.id == sid)
                .values(payload={"output": f"run {sid}"})
            )
        queries.flag_for_review(session, submission_id="s0")
    assert review_of(db_url, "s0") == ("flagged", None)
    assert review_of(db_url, "s1") == (None, None)

    with session_scope(db_url) as session:
        queries.accept_review(session, submission_id="s0")
    review, accepted_at = review_of(db_url, "s0")
    assert review == "accepted"
    assert accepted_at is not None

    with session_scope(db_url) as session:  # the merge runs again: idempotent, decision kept
        queries.flag_for_review(session, submission_id="s0")
        queries.accept_review(session, submission_id="s0")  # accepting again is a no-op
    assert review_of(db_url, "s0") == ("accepted", accepted_at)


def test_accepting_an_unknown_or_unflagged_submission_is_an_error(db_url: str) -> None:
    store(db_url, *ORDINARY[:1])
    with pytest.raises(NotFound, match="'nope'"), session_scope(db_url) as session:
        queries.accept_review(session, submission_id="nope")
    with pytest.raises(InvalidInput) as caught, session_scope(db_url) as session:
        queries.accept_review(session, submission_id="s0")
    assert caught.value.problems == [("review", "submission 's0' is not flagged for review")]
    assert review_of(db_url, "s0") == (None, None)


def test_flagged_submissions_by_task_in_id_order(db_url: str) -> None:
    store(
        db_url,
        run("b", tokens=1, calls=1, seconds=1.0),
        run("a", tokens=1, calls=1, seconds=1.0),
        run("c", tokens=1, calls=1, seconds=1.0),
        run("x", task_id="t2", tokens=1, calls=1, seconds=1.0),
        run("kept", tokens=1, calls=1, seconds=1.0),
    )
    with session_scope(db_url) as session:
        for sid in ("b", "x", "a", "c"):
            queries.flag_for_review(session, submission_id=sid)
        queries.accept_review(session, submission_id="c")

    def flagged(task_id: str | None = None) -> list[str]:
        with session_scope(db_url) as session:
            return [row.id for row in queries.flagged_submissions(session, task_id=task_id)]

    assert flagged() == ["a", "b", "x"]
    assert flagged("t1") == ["a", "b"]
    assert flagged("t2") == ["x"]
    assert flagged("none") == []


def test_migration_0004_goes_down_and_up_again_with_runs_stored(db_url: str) -> None:
    store(db_url, *ORDINARY[:2])
    with session_scope(db_url) as session:
        for sid in ("s0", "s1"):  # two runs of their own: migration 0008 hashes the payloads
            session.execute(
                update(SubmissionRow)
                .where(SubmissionRow.id == sid)
                .values(payload={"output": f"run {sid}"})
            )
        queries.flag_for_review(session, submission_id="s0")
        session.add(
            EvaluationRow(
                submission_id="s0",
                task_id="t1",
                status="done",
                scores={},
                missing_tiers={},
                baseline_version=0,
                profile_hash="0" * 64,
            )
        )

    def migrate(step: str, revision: str) -> set[str]:
        engine = engine_for(db_url)
        with engine.begin() as connection:
            config = migrations_config()
            config.attributes["connection"] = connection
            getattr(command, step)(config, revision)
        engine.dispose()  # SQLite: drop cached connections that saw the old table
        return {column["name"] for column in inspect(engine).get_columns("submissions")}

    assert {"review", "reviewed_at"}.isdisjoint(migrate("downgrade", "0003"))
    assert {"review", "reviewed_at"} <= migrate("upgrade", "head")
    assert review_of(db_url, "s0") == (None, None)  # the column came back empty
    assert baseline(db_url)["submission_count"] == 2
