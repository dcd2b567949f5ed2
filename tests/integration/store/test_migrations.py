"""A SQLite store migrates on its first session only when it is behind: the newest revision is
read from the migration files without Alembic, and must be Alembic's own answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.script import ScriptDirectory

from evalq.store.db import engine_for, head_revisions, is_current, migrations_config, session_scope

pytestmark = pytest.mark.both_databases  # the database matters here (tests/conftest.py)


def test_the_head_read_from_the_files_is_alembic_s() -> None:
    script = ScriptDirectory.from_config(migrations_config())
    assert head_revisions() == frozenset(script.get_heads())


def test_a_store_behind_is_migrated_on_first_use_and_a_current_one_is_left_alone(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'behind.db'}"
    (previous,) = {
        script.down_revision
        for script in ScriptDirectory.from_config(migrations_config()).walk_revisions()
        if script.revision in head_revisions()
    }
    engine = engine_for(url)
    with engine.begin() as connection:
        config = migrations_config()
        config.attributes["connection"] = connection
        command.upgrade(config, str(previous))
    assert not is_current(url)
    with session_scope(url):
        pass
    assert is_current(url)


def test_an_empty_database_is_not_current(tmp_path: Path) -> None:
    assert not is_current(f"sqlite:///{tmp_path / 'empty.db'}")


def test_0015_fills_the_judge_columns_from_the_stored_metrics(db_url: str) -> None:
    """A judge tier stored before 0015 keeps counting in /metrics: its figures are copied from
    its JSON metrics into the new columns (SQLite and PostgreSQL spell JSON differently)."""
    from sqlalchemy import text

    from evalq.read.health import evaluation_health

    engine = engine_for(db_url)
    with engine.begin() as connection:
        config = migrations_config()
        config.attributes["connection"] = connection
        command.downgrade(config, "0014")
        connection.execute(
            text(
                "INSERT INTO tasks (id, definition, content_hash, updated_at, "
                "refresh_scheduled) VALUES ('t', '{}', 'h', CURRENT_TIMESTAMP, "
                "false)"
            )
        )
        connection.execute(
            text(
                "INSERT INTO submissions (id, task_id, content_hash, payload, status,"
                " enqueue_count, created_at, updated_at, tool, model, total_tokens, tool_calls,"
                " iterations) VALUES"
                " ('s', 't', 'h', '{}', 'done', 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'a', 'm',"
                " 1, 0, 1)"
            )
        )
        metrics = (
            '{"transport_retries": 2, "validation_retries": 1, "rate_limited": 3, "cost_usd": 0.25}'
        )
        connection.execute(
            text(
                "INSERT INTO tier_results (submission_id, tier, status, metrics, deliveries,"
                " updated_at) VALUES ('s', 'judge', 'ok', :metrics, 1, CURRENT_TIMESTAMP)"
            ),
            {"metrics": metrics},
        )
        command.upgrade(config, "head")
    with session_scope(db_url) as session:
        judge = evaluation_health(session).judge
    figures = (judge.transport_retries, judge.validation_retries, judge.rate_limited)
    assert figures == (2, 1, 3) and judge.cost_usd == 0.25


def test_0025_copies_the_judge_tiers_with_an_identity_as_their_first_series(db_url: str) -> None:
    """Judge tiers stored before 0025 start their judge's series (judged_results); one judged
    before identities were recorded has no series to name and is left out."""
    import json

    from sqlalchemy import select, text

    from evalq.core.judge_series import series_id
    from evalq.core.results import JudgeIdentity
    from evalq.store.models import JudgedResultRow, TaskJudgeSeriesRow

    identity = {
        "model": "openai:judge-a",
        "provider": "openai",
        "version": "judge-a",
        "prompt_digest": "p" * 64,
        "rubric_digest": "r" * 64,
    }
    engine = engine_for(db_url)
    with engine.begin() as connection:
        config = migrations_config()
        config.attributes["connection"] = connection
        command.downgrade(config, "0023_task_audits")
        connection.execute(
            text(
                "INSERT INTO tasks (id, definition, content_hash, updated_at, "
                "refresh_scheduled, kind) VALUES ('t', '{}', 'h', CURRENT_TIMESTAMP, false, "
                "'peerread')"
            )
        )
        for sid, metrics in (
            ("with", {"scores": {"constructiveness": 0.75}, "identity": identity}),
            ("without", {"scores": {"constructiveness": 0.5}}),
        ):
            connection.execute(
                text(
                    "INSERT INTO submissions (id, task_id, content_hash, payload, status,"
                    " enqueue_count, created_at, updated_at, tool, model, total_tokens,"
                    " tool_calls, iterations) VALUES (:sid, 't', 'h', '{}', 'done', 1,"
                    " CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'a', 'm', 1, 0, 1)"
                ),
                {"sid": sid},
            )
            connection.execute(
                text(
                    "INSERT INTO tier_results (submission_id, tier, status, metrics, deliveries,"
                    " updated_at) VALUES (:sid, 'judge', 'ok', :metrics, 1, CURRENT_TIMESTAMP)"
                ),
                {"sid": sid, "metrics": json.dumps(metrics)},
            )
        command.upgrade(config, "head")
    with session_scope(db_url) as session:
        (row,) = session.scalars(select(JudgedResultRow)).all()
        assert (row.submission_id, row.source, row.scores) == (
            "with",
            "tier",
            {"constructiveness": 0.75},
        )
        assert row.series == series_id(JudgeIdentity.model_validate(identity))
        # the task is known to be scored by that judge, without reading its results again
        assert session.execute(
            select(TaskJudgeSeriesRow.task_id, TaskJudgeSeriesRow.series)
        ).all() == [("t", row.series)]


def test_0024_counts_a_stores_tallies_as_the_refresh_does(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store migrated to 0024_board_tallies holds the agent tallies the refresh's recount
    gives (the merges before it wrote none)."""
    from sqlalchemy import delete, select
    from tests.support.settings import configure
    from tests.support.small_board import TASK_ID, evaluate_small_board

    from evalq.store import tallies
    from evalq.store.db import upgrade
    from evalq.store.models import AgentTallyRow

    monkeypatch.delenv("EVALQ_BROKER_URL", raising=False)
    configure(monkeypatch, database_url=db_url)
    evaluate_small_board(db_url)

    def stored() -> list[tuple[object, ...]]:
        with session_scope(db_url) as session:
            return [
                tuple(getattr(row, c.name) for c in AgentTallyRow.__table__.columns)
                for row in session.scalars(
                    select(AgentTallyRow).order_by(AgentTallyRow.tool, AgentTallyRow.model)
                )
            ]

    with session_scope(db_url) as session:
        session.execute(delete(AgentTallyRow))
        tallies.recount(session, task_id=TASK_ID)
    recounted = stored()
    assert recounted
    with engine_for(db_url).begin() as connection:
        config = migrations_config()
        config.attributes["connection"] = connection
        command.downgrade(config, "0023_task_audits")
    upgrade(db_url)
    assert stored() == recounted


def test_0028_reads_every_stored_timed_trace_as_the_submitters_own(db_url: str) -> None:
    """No run stored before 0028 recorded which key sent its spans: a stored timed trace is
    ``submitted`` (never ``collected``), a run without one stays self-reported."""
    from sqlalchemy import text

    engine = engine_for(db_url)
    with engine.begin() as connection:
        config = migrations_config()
        config.attributes["connection"] = connection
        command.downgrade(config, "0027_standings_key_indexes")
        connection.execute(
            text(
                "INSERT INTO tasks (id, definition, content_hash, updated_at, "
                "refresh_scheduled) VALUES ('t', '{}', 'h', CURRENT_TIMESTAMP, false)"
            )
        )
        for sid, seconds in (("timed", 9.5), ("bare", None)):
            connection.execute(
                text(
                    "INSERT INTO submissions (id, task_id, content_hash, payload, status,"
                    " enqueue_count, created_at, updated_at, tool, model, total_tokens,"
                    " tool_calls, iterations, trace_seconds) VALUES"
                    " (:sid, 't', 'h', '{}', 'done', 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP,"
                    " 'a', 'm', 1, 0, 1, :seconds)"
                ),
                {"sid": sid, "seconds": seconds},
            )
        command.upgrade(config, "head")
        rows = connection.execute(text("SELECT id, trace_provenance FROM submissions"))
        assert {sid: provenance for sid, provenance in rows} == {"timed": "submitted", "bare": None}


def store_runs(connection: Any, payloads: dict[str, str]) -> None:
    """Task ``t`` and one done run per ``id: payload`` (JSON text), as an older revision
    stores them (raw SQL: the models are the head's)."""
    from sqlalchemy import text

    connection.execute(
        text(
            "INSERT INTO tasks (id, definition, content_hash, updated_at, "
            "refresh_scheduled) VALUES ('t', '{}', 'h', CURRENT_TIMESTAMP, false)"
        )
    )
    for sid, payload in payloads.items():
        connection.execute(
            text(
                "INSERT INTO submissions (id, task_id, content_hash, payload, status,"
                " enqueue_count, created_at, updated_at, tool, model, total_tokens,"
                " tool_calls, iterations) VALUES"
                " (:sid, 't', 'h', :payload, 'done', 1, CURRENT_TIMESTAMP,"
                " CURRENT_TIMESTAMP, 'a', 'm', 1, 0, 1)"
            ),
            {"sid": sid, "payload": payload},
        )


def test_0029_copies_each_stored_runs_plan_into_its_column(db_url: str) -> None:
    """A run stored before 0029 keeps its run plan: ``planned_runs`` is read out of its payload
    (SQLite's json_extract, PostgreSQL's ->>), and a run that declares none has none."""
    from sqlalchemy import text

    engine = engine_for(db_url)
    with engine.begin() as connection:
        config = migrations_config()
        config.attributes["connection"] = connection
        command.downgrade(config, "0028_trace_provenance")
        store_runs(
            connection,
            {
                "planned": '{"variant": "T1", "planned_runs": 7}',
                "unplanned": '{"variant": "T1"}',
                "null": '{"planned_runs": null}',
            },
        )
        command.upgrade(config, "head")
        rows = connection.execute(text("SELECT id, planned_runs FROM submissions"))
        assert {sid: planned for sid, planned in rows} == {
            "planned": 7,
            "unplanned": None,
            "null": None,
        }


def test_0029_counts_a_stores_board_tallies_as_the_refresh_does(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store migrated to 0029 holds the board's counts the refresh's recount gives, and its
    standings carry the refresh's copy marks."""
    from sqlalchemy import delete, select, update
    from tests.support.settings import configure
    from tests.support.small_board import TASK_ID, evaluate_small_board

    from evalq.store import task_tallies
    from evalq.store.db import upgrade
    from evalq.store.models import StandingRow, SubmissionRow, TaskTallyRow

    monkeypatch.delenv("EVALQ_BROKER_URL", raising=False)
    configure(monkeypatch, database_url=db_url)
    evaluate_small_board(db_url)
    with session_scope(db_url) as session:  # one run marked a copy by the last refresh
        first, second = session.scalars(
            select(SubmissionRow.id)
            .where(SubmissionRow.task_id == TASK_ID)
            .order_by(SubmissionRow.id)
            .limit(2)
        )
        session.execute(
            update(SubmissionRow).where(SubmissionRow.id == second).values(copy_of=first)
        )
        session.execute(
            update(StandingRow).where(StandingRow.submission_id == second).values(copy_of=first)
        )
        session.execute(delete(TaskTallyRow))
        task_tallies.recount(session, task_id=TASK_ID)
        recounted = dict(task_tallies.counts(session, task_id=TASK_ID))
    assert recounted["rows"] and any(key.startswith("arena any bin ") for key in recounted)
    with engine_for(db_url).begin() as connection:
        config = migrations_config()
        config.attributes["connection"] = connection
        command.downgrade(config, "0028_trace_provenance")
    upgrade(db_url)
    with session_scope(db_url) as session:
        assert dict(task_tallies.counts(session, task_id=TASK_ID)) == recounted
        marks = set(
            session.execute(
                select(StandingRow.submission_id, StandingRow.copy_of).where(
                    StandingRow.copy_of.is_not(None)
                )
            ).all()
        )
        assert (second, first) in marks
        assert marks == set(
            session.execute(
                select(SubmissionRow.id, SubmissionRow.copy_of).where(
                    SubmissionRow.copy_of.is_not(None)
                )
            ).all()
        )


def test_0030_adds_the_run_tickets_each_used_once_and_removes_them(db_url: str) -> None:
    """0030 adds an empty ``run_tickets`` table: a ticket is used by one run at most and a run
    uses one ticket at most (``used_by`` unique), on both databases; downgraded, it is gone."""
    from sqlalchemy import inspect, text
    from sqlalchemy.exc import IntegrityError

    engine = engine_for(db_url)
    with engine.begin() as connection:
        config = migrations_config()
        config.attributes["connection"] = connection
        command.downgrade(config, "0029_planned_runs")
        assert "run_tickets" not in inspect(connection).get_table_names()
        command.upgrade(config, "head")
        connection.execute(
            text(
                "INSERT INTO tasks (id, definition, content_hash, updated_at, "
                "refresh_scheduled) VALUES ('t', '{}', 'h', CURRENT_TIMESTAMP, false)"
            )
        )
        connection.execute(
            text(
                "INSERT INTO submissions (id, task_id, content_hash, payload, status,"
                " enqueue_count, created_at, updated_at, tool, model, total_tokens,"
                " tool_calls, iterations) VALUES ('r', 't', 'h', '{}', 'done', 1,"
                " CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'a', 'm', 1, 0, 1)"
            )
        )
        insert = text(
            "INSERT INTO run_tickets (id, plan_id, position, task_id, variant, issued_at,"
            " deadline, used_by) VALUES (:id, 'p', 0, 't', 'T1', CURRENT_TIMESTAMP,"
            " CURRENT_TIMESTAMP, :used_by)"
        )
        connection.execute(insert, {"id": "a", "used_by": "r"})
        connection.execute(insert, {"id": "b", "used_by": None})
        connection.execute(insert, {"id": "c", "used_by": None})  # many unused
        with pytest.raises(IntegrityError), connection.begin_nested():
            connection.execute(insert, {"id": "d", "used_by": "r"})
        command.downgrade(config, "0029_planned_runs")
        assert "run_tickets" not in inspect(connection).get_table_names()
        command.upgrade(config, "head")


def test_0034_stores_the_metadata_entries_of_every_stored_run(db_url: str) -> None:
    """A run stored before 0034 gets the metadata entries a board filter compares, read from
    its payload: each top-level value a filter can equal, as its text (a number or boolean in
    its JSON form, a string itself); a list, an object or a string longer than a filter value
    is never one, and a run without metadata has none. Downgraded, the table is gone."""
    from sqlalchemy import inspect, text

    long_text = "x" * 201
    payloads = {
        "tagged": (
            '{"metadata": {"attempt": 2, "rate": 2.5, "ok": true, "none": null, '
            f'"branch": "main", "list": [1], "nested": {{"a": 1}}, "long": "{long_text}"}}}}'
        ),
        "bare": "{}",
        "empty": '{"metadata": {}}',
    }
    engine = engine_for(db_url)
    with engine.begin() as connection:
        config = migrations_config()
        config.attributes["connection"] = connection
        command.downgrade(config, "0033_task_refreshes")
        store_runs(connection, payloads)
        command.upgrade(config, "head")
        rows = connection.execute(text("SELECT submission_id, key, value FROM run_metadata"))
        assert sorted(tuple(row) for row in rows) == [
            ("tagged", "attempt", "2"),
            ("tagged", "branch", "main"),
            ("tagged", "none", "null"),
            ("tagged", "ok", "true"),
            ("tagged", "rate", "2.5"),
        ]
        command.downgrade(config, "0033_task_refreshes")
        assert "run_metadata" not in inspect(connection).get_table_names()
        command.upgrade(config, "head")
