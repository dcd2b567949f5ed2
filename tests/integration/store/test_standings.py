"""Boards ranked in the database from the stored standings (issue 33) equal the boards the pure
scoring functions compute from every run (`board_of` over a `task_view`), on random tasks of the
kinds that page in SQL, on SQLite and PostgreSQL; a page costs a fixed number of statements
whatever the task's size; and a run stored under an older schema is listed, marked, not a 500."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, func, select, update

from evalq.core.profile import profile_named
from evalq.core.schemas import Submission, Task, parse_submission
from evalq.core.settings import Settings
from evalq.producer.cli.demo import EXAMPLES
from evalq.read import served, standings
from evalq.read.leaderboard import board_of, copies_of, leaderboard
from evalq.read.rank_uncertainty import SUITE_INTERVAL_MAX_ENTRIES
from evalq.read.view import task_context, task_view
from evalq.scoring.arena import compute_baseline
from evalq.scoring.evaluation import evaluate_submission
from evalq.store import copies, queries, task_tallies
from evalq.store.baseline_sql import refresh_task_baseline
from evalq.store.db import session_scope
from evalq.store.models import BoardFiguresRow, EvaluationRow, StandingRow, SubmissionRow

pytestmark = pytest.mark.both_databases  # the database ranks here (tests/conftest.py)

RECOMMENDATIONS = ("accept", "weak_accept", "weak_reject", "reject")
FILTERS: list[dict[str, Any]] = [
    {},
    {"model": "o3"},
    {"tool": "aider", "status": "done"},
    {"status": "degraded"},
    {"include_held": True},
]


def example(kind: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A bundled task definition of ``kind`` and one of its submissions (JSON)."""
    line = json.loads((EXAMPLES / f"{kind}.jsonl").read_text().splitlines()[0])
    tasks = {t["id"]: t for t in json.loads((EXAMPLES / "tasks.json").read_text())}
    return tasks[line["task_id"]], line


def store_task(
    url: str,
    kind: str,
    task_id: str,
    rng: random.Random,
    size: int,
    start: int = 0,
    *,
    project: bool = True,
) -> None:
    """A task of ``kind`` with ``size`` evaluated runs: random usage, statuses, composites
    (PeerRead) and reviews, a few exact copies, and some ties; with ``project``, their
    standings written as the merge's projector writes them (reads never do)."""
    definition, line = example(kind)
    task = Task.model_validate({**definition, "id": task_id})
    profile = profile_named(task.profile)
    line = {k: v for k, v in line.items() if k != "trace"} | {"task_id": task_id}
    with session_scope(url) as session:
        queries.put_task(session, task=task)
        made: list[Submission] = []
        for index in range(start, start + size):
            if made and rng.random() < 0.1:  # a copy of an earlier run under a new id
                copied = rng.choice(made).model_dump(mode="json")
                submission = parse_submission(copied | {"id": f"{task_id}-{index:04d}"})
            else:
                tokens = rng.choice([500, 1_000, rng.randint(100, 90_000)])
                usage = {
                    "input_tokens": tokens - tokens // 4,
                    "output_tokens": tokens // 4,
                    "total_tokens": tokens,
                    "tool_calls": rng.randint(0, 30),
                    "iterations": rng.randint(1, 6),
                    "execution_time": rng.choice([None, 12.5, rng.uniform(0.5, 300)]),
                }
                varied: dict[str, Any] = {
                    "id": f"{task_id}-{index:04d}",
                    "tool": rng.choice(["aider", "codex", "cline"]),
                    "model": rng.choice(["gpt-4o", "o3"]),
                    "usage": line.get("usage", {}) | usage,
                }
                if "variant" in line:  # Scylla: runs of four variants, passing or not
                    varied |= {
                        "variant": rng.choice(["T0", "T1", "T2", "T3"]),
                        "run_index": index,
                        "passed": rng.random() < 0.6,
                        "impl_rate": round(rng.random(), 3),
                    }
                if "scenarios" in line:  # suite: each scenario's outputs right or wrong
                    varied["scenarios"] = [
                        scenario | {"correct_outputs": rng.randint(0, scenario["total_outputs"])}
                        for scenario in line["scenarios"]
                        if "total_outputs" in scenario
                    ] + [s for s in line["scenarios"] if "total_outputs" not in s]
                submission = parse_submission(line | varied)
            made.append(submission)
            cost = rng.choice([None, 0.02, rng.uniform(0.001, 2.0)])
            queries.add_submission(session, submission=submission, cost_usd=cost)
            result = evaluate_submission(
                submission, task, {}, compute_baseline([], profile.arena), profile, cost_usd=cost
            )
            scores = result.scores.model_dump(mode="json")
            status = rng.choice(["done", "done", "degraded"])
            if scores.get("peerread") is not None:
                scores["peerread"] |= {
                    "composite": rng.choice([None, 0.5, round(rng.random(), 6)]),
                    "recommendation": rng.choice(RECOMMENDATIONS),
                    "partial": rng.random() < 0.2,
                }
            session.add(
                EvaluationRow(
                    submission_id=submission.id,
                    task_id=task_id,
                    status=status,
                    scores=scores,
                    missing_tiers={},
                    baseline_version=0,
                    profile_hash=profile.hash,
                )
            )
            review = rng.choice([None, None, None, "flagged", "accepted"])
            session.execute(
                update(SubmissionRow)
                .where(SubmissionRow.id == submission.id)
                .values(status=status, review=review)
            )
    with session_scope(url) as session:
        refresh_task_baseline(session, task_id=task_id)
    if project:
        with session_scope(url) as session:  # what the merge's projector keeps per run
            standings.sync(session, task_context(session, task_id=task_id))
            copied, _ = copies_of(session, task_id=task_id)
            copies.mark(session, copies.store_all(session, task_id=task_id, copies=copied))
            task_tallies.recount(session, task_id=task_id)


def paged(url: str, task_id: str, size: int, **filters: Any) -> list[Any]:
    found: list[Any] = []
    offset = 0
    while True:
        with session_scope(url) as session:
            page = leaderboard(session, task_id=task_id, limit=size, offset=offset, **filters)
        found.append(page)
        offset += size
        if offset >= (page.total or 0):
            return found


@pytest.mark.parametrize("kind", ["arena", "peerread"])
def test_database_ranks_equal_the_pure_board_on_random_tasks(db_url: str, kind: str) -> None:
    rng = random.Random(33)
    for case, size in enumerate([1, 2, 7, 40]):
        task_id = f"{kind}-{case}"
        store_task(db_url, kind, task_id, rng, size)
        for filters in FILTERS:
            with session_scope(db_url) as session:
                whole = board_of(
                    task_view(session, task_id=task_id),
                    **{k: v for k, v in filters.items()},
                )
            pages = paged(db_url, task_id, 3, **filters)
            listed = [e for p in pages for e in p.entries]
            assert listed == whole.entries, (task_id, filters)
            first = pages[0]
            assert first.total == len(whole.entries)
            assert first.duplicate_of == whole.duplicate_of
            assert first.baseline_note == whole.baseline_note
            assert first.kind == whole.kind == kind
            ci, expected = first.confidence_interval, whole.confidence_interval
            assert (ci.enough_data, ci.level, ci.of) == (
                expected.enough_data,
                expected.level,
                expected.of,
            )
            for bound in ("low", "high", "mean"):
                assert getattr(ci, bound) == pytest.approx(getattr(expected, bound), abs=2e-4)
        # after a refresh the unfiltered board is read in the places it stored: the same
        with session_scope(db_url) as session:
            served.refresh_task(session, task_id=task_id)
            assert session.scalar(
                select(func.count()).where(
                    StandingRow.task_id == task_id, StandingRow.place.is_not(None)
                )
            )
        with session_scope(db_url) as session:
            whole = board_of(task_view(session, task_id=task_id))
        placed = paged(db_url, task_id, 3)
        assert [e for p in placed for e in p.entries] == whole.entries, task_id
        assert (
            placed[0].confidence_interval.mean
            == pytest.approx(whole.confidence_interval.mean, abs=2e-4)
            or placed[0].confidence_interval.mean is whole.confidence_interval.mean
        )


def test_a_traced_only_profile_ranks_the_same_runs_in_the_database(
    db_url: str, tmp_path: Path
) -> None:
    # about half the runs carry a collected trace, a quarter a timed trace of their own (the
    # stored column the rule reads); a profile that ranks only the collected ones lists the
    # others apart, in SQL as in Python, read live (filtered) or as placed
    rng = random.Random(35)
    task_id = "arena-traced"
    store_task(db_url, "arena", task_id, rng, 40)
    with session_scope(db_url) as session:
        ids = list(
            session.scalars(select(SubmissionRow.id).where(SubmissionRow.task_id == task_id))
        )
        drawn = {sid: rng.random() for sid in ids}
        for provenance, chosen in (
            ("collected", [sid for sid, x in drawn.items() if x < 0.5]),
            ("submitted", [sid for sid, x in drawn.items() if 0.5 <= x < 0.75]),
        ):
            session.execute(
                update(SubmissionRow)
                .where(SubmissionRow.id.in_(chosen))
                .values(trace_seconds=9.5, trace_provenance=provenance)
            )
    path = tmp_path / "traced.toml"
    path.write_text('[arena]\nusage = "traced"\n')
    settings = Settings(database_url=db_url, profile_path=path)
    with session_scope(db_url) as session:
        # the standings scored under this profile (a deployment that reads under it refreshes
        # under it) and the provenance changed above counted
        served.refresh_task(session, task_id=task_id, settings=settings)
    for filters in FILTERS:
        with session_scope(db_url) as session:
            whole = board_of(task_view(session, task_id=task_id, settings=settings), **filters)
        pages = paged(db_url, task_id, 3, settings=settings, **filters)
        assert [e for p in pages for e in p.entries] == whole.entries, filters
        assert (
            pages[0].total,
            pages[0].self_reported,
            pages[0].own_trace,
            pages[0].usage_note,
        ) == (len(whole.entries), whole.self_reported, whole.own_trace, whole.usage_note)
        ranked = [e.usage_source for e in whole.entries if e.rank is not None]
        assert set(ranked) <= {"collected-trace"}
        assert all(e.rank is None for e in whole.entries if e.usage_source != "collected-trace")
    assert 0 < whole.own_trace < whole.self_reported < len(whole.entries)
    with session_scope(db_url) as session:
        whole = board_of(task_view(session, task_id=task_id, settings=settings))
    placed = paged(db_url, task_id, 3, settings=settings)
    assert [e for p in placed for e in p.entries] == whole.entries


@pytest.mark.parametrize("kind", ["scylla", "suite"])
def test_whole_task_figures_pages_equal_the_pure_board(db_url: str, kind: str) -> None:
    rng = random.Random(34)
    for case, size in enumerate([1, 5, 30]):
        task_id = f"{kind}-{case}"
        store_task(db_url, kind, task_id, rng, size)
        with session_scope(db_url) as session:
            whole = board_of(task_view(session, task_id=task_id))
        assert whole.kind == kind
        for read in range(2):  # drawn for the read (never stored by it), then as stored
            pages = paged(db_url, task_id, 4)
            assert [e for p in pages for e in p.entries] == whole.entries, task_id
            assert pages[-1].variants == whole.variants
            assert pages[0].rank_uncertainty == whole.rank_uncertainty
            with session_scope(db_url) as session:
                stored = session.get(BoardFiguresRow, task_id)
                assert (stored is not None) == bool(read), "only the refresh stores them"
                if not read:
                    served.refresh_task(session, task_id=task_id)  # the projector stores them
        # a run accepted moves the task: its figures are computed again, not served stale
        with session_scope(db_url) as session:
            held = session.scalar(
                select(SubmissionRow.id).where(
                    SubmissionRow.task_id == task_id, SubmissionRow.review == "flagged"
                )
            )
            if held is None:
                continue
            session.execute(
                update(SubmissionRow).where(SubmissionRow.id == held).values(review="accepted")
            )
        # until the refresh, the stored figures are served, saying when they were drawn
        stale = paged(db_url, task_id, 1000)[0]
        assert "before the latest runs" in stale.rank_uncertainty.note
        with session_scope(db_url) as session:
            served.refresh_task(session, task_id=task_id)
        with session_scope(db_url) as session:
            whole = board_of(task_view(session, task_id=task_id))
        assert [e for p in paged(db_url, task_id, 4) for e in p.entries] == whole.entries


def test_a_moved_baseline_rescores_the_standings_as_a_fresh_build(db_url: str) -> None:
    store_task(db_url, "arena", "moved", random.Random(4), 30, project=False)
    with session_scope(db_url) as session:
        context = task_context(session, task_id="moved")
        assert standings.sync(session, context) == 30  # none yet: built from the stored runs
        assert standings.sync(session, context) == 0  # current: nothing written
    # more runs move the baseline (store_task refreshes it): the 30 rows are rescored from
    # their columns, the 20 new ones built from their stored runs
    store_task(db_url, "arena", "moved", random.Random(6), 20, start=30, project=False)
    with session_scope(db_url) as session:
        context = task_context(session, task_id="moved")
        assert context.current.version > 1
        assert standings.sync(session, context) == 50
        kept = rows_of(session, "moved")
        session.execute(StandingRow.__table__.delete().where(StandingRow.task_id == "moved"))
        assert standings.sync(session, context) == 50  # all built from the stored runs
        assert rows_of(session, "moved") == kept


def rows_of(session: Any, task_id: str) -> list[tuple[Any, ...]]:
    columns = [c for c in StandingRow.__table__.columns]
    return [
        tuple(row)
        for row in session.execute(
            select(*columns).where(StandingRow.task_id == task_id).order_by(*columns[:1])
        )
    ]


def count_statements(url: str, task_id: str, **read: Any) -> int:
    statements: list[str] = []
    with session_scope(url) as session:
        engine = session.get_bind()

        def seen(*args: Any) -> None:
            statements.append(args[2])

        event.listen(engine, "before_cursor_execute", seen)
        try:
            leaderboard(session, task_id=task_id, limit=3, **read)
        finally:
            event.remove(engine, "before_cursor_execute", seen)
    return len(statements)


def test_a_page_costs_the_same_statements_whatever_the_task_size(db_url: str) -> None:
    rng = random.Random(8)
    store_task(db_url, "arena", "small", rng, 50)
    store_task(db_url, "arena", "large", rng, 400)
    for task_id in ("small", "large"):  # the first read builds the standings
        count_statements(db_url, task_id)
    # held runs ranked, so a page never needs the held rows' statement (data, not size); a live
    # page is its rows, one statement of counts for their ranks and one for their category ranks
    for read in ({}, {"offset": 2}, {"model": "o3"}, {"status": "done"}):
        read |= {"include_held": True}
        small = count_statements(db_url, "small", **read)
        assert small == count_statements(db_url, "large", **read) <= 14, read
    # refreshed: the unfiltered board is read in its stored places, in fewer statements
    for task_id in ("small", "large"):
        with session_scope(db_url) as session:
            served.refresh_task(session, task_id=task_id)
    for read in ({}, {"offset": 2}):
        small = count_statements(db_url, "small", **read)
        assert small == count_statements(db_url, "large", **read) <= 12, read


def test_a_run_stored_under_an_older_schema_is_listed_marked_not_a_500(db_url: str) -> None:
    store_task(db_url, "arena", "old", random.Random(5), 8)
    with session_scope(db_url) as session:
        victim = session.scalar(
            select(func.min(SubmissionRow.id)).where(SubmissionRow.task_id == "old")
        )
        # a payload written before a field became required, and a scores document of an
        # older shape: neither validates today
        session.execute(
            update(SubmissionRow).where(SubmissionRow.id == victim).values(payload={"id": victim})
        )
        session.execute(StandingRow.__table__.delete().where(StandingRow.submission_id == victim))
    with session_scope(db_url) as session:  # the refresh's projector builds its row, marked
        standings.sync(session, task_context(session, task_id="old"))
    with session_scope(db_url) as session:
        board = leaderboard(session, task_id="old", limit=50, include_held=True)
    marked = [e for e in board.entries if e.problem]
    assert [e.submission_id for e in marked] == [victim]
    assert "older schema" in (marked[0].problem or "")
    assert marked[0].ranking_value is None
    assert board.entries[-1].submission_id == victim  # no value: ranked last
    assert board.total == 8


def test_a_large_suite_board_says_why_it_draws_no_rank_intervals(db_url: str) -> None:
    store_task(db_url, "suite", "big", random.Random(9), 40)
    with session_scope(db_url) as session:
        # held runs ranked too: random usage makes most of them outliers
        whole = board_of(task_view(session, task_id="big"), include_held=True)
        page = leaderboard(session, task_id="big", limit=5, include_held=True)
    ranked = [e for e in whole.entries if e.rank is not None]
    assert len(ranked) > SUITE_INTERVAL_MAX_ENTRIES
    assert whole.rank_uncertainty.resamples == 0
    assert f"at most {SUITE_INTERVAL_MAX_ENTRIES} ranked entries" in whole.rank_uncertainty.note
    assert all(
        e.rank_interval is None and "at most" in (e.rank_interval_note or "") for e in ranked
    )
    assert page.entries == whole.entries[:5]
