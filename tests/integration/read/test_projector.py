"""Only the projector writes the boards' read model; a board read never writes (issue 44): not
on a quiet board, not when the task's figures were never stored, not when its standings are
behind its basis (then the whole task is ranked from its runs, and equals the pure board)."""

from __future__ import annotations

import random
import shutil
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import delete, event, select, update
from tests.support.cloned_task import clone, cloned_task, template_rows

from evalq.core.profile import profile_named
from evalq.read import served
from evalq.read.board_page import board_page
from evalq.read.boards import projector
from evalq.read.boards.query import BoardQuery
from evalq.read.leaderboard import board_of
from evalq.read.view import task_context, task_view
from evalq.scoring.kinds import KINDS
from evalq.store import queries
from evalq.store import standings as table
from evalq.store.baseline_sql import sql_baseline
from evalq.store.db import engine_for, session_scope
from evalq.store.models import (
    BoardFiguresRow,
    EvaluationRow,
    StandingRow,
    SubmissionRow,
    TaskRow,
    TierResultRow,
)

WRITES = ("insert", "update", "delete", "upsert", "replace")


def writes_during(url: str, read: Any) -> list[str]:
    """The writing statements ``read(session)`` issued (a SQLAlchemy event listener)."""
    written: list[str] = []

    def seen(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().lower().startswith(WRITES):
            written.append(statement)

    engine = engine_for(url)
    event.listen(engine, "before_cursor_execute", seen)
    try:
        with session_scope(url) as session:
            read(session)
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    return written


def every_board_read(url: str, task_id: str) -> None:
    """The board reads every door makes: the API's pages, the UI's page, the whole board."""
    for limit, offset in ((50, 0), (3, 1)):
        assert not writes_during(
            url,
            lambda s, limit=limit, offset=offset: served.board(
                s, BoardQuery(task_id=task_id, limit=limit, offset=offset)
            ),
        )
        assert not writes_during(
            url, lambda s, limit=limit: board_page(s, BoardQuery(task_id=task_id, limit=limit))
        )
    assert not writes_during(
        url, lambda s: served.board(s, BoardQuery(task_id=task_id, model="o3", limit=5))
    )
    assert not writes_during(url, lambda s: served.board(s, BoardQuery(task_id=task_id)))


def test_board_reads_write_nothing_whatever_the_read_model_holds(
    store: str, tmp_path: Path
) -> None:
    path = Path(store.removeprefix("sqlite:///"))
    copy = tmp_path / "copy.db"
    shutil.copyfile(path, copy)
    url = f"sqlite:///{copy}"
    with session_scope(url) as session:
        tasks = list(session.scalars(select(TaskRow.id).order_by(TaskRow.id)))
    for task_id in tasks:  # quiet boards: everything the refresh stores is there
        every_board_read(url, task_id)
    with session_scope(url) as session:  # figures never stored, one standing per task behind
        session.execute(delete(BoardFiguresRow))
        for task_id in tasks:
            first = session.scalar(
                select(StandingRow.submission_id).where(StandingRow.task_id == task_id).limit(1)
            )
            session.execute(
                update(StandingRow)
                .where(StandingRow.submission_id == first)
                .values(basis="an older baseline", arena_key=0.0)
            )
    for task_id in tasks:
        every_board_read(url, task_id)
        with session_scope(url) as session:
            whole = board_of(task_view(session, task_id=task_id))
            board = served.board(session, BoardQuery(task_id=task_id))
        # ranked as stored until the refresh scores the row behind again, and said: every run
        # listed, each showing its score as of now
        assert board.rescoring_note is not None, task_id
        assert board.rescoring_note.startswith(f"Of the task's {len(whole.entries)} evaluated")
        assert "1 placed by their scores against an earlier baseline" in board.rescoring_note
        assert sorted(e.submission_id for e in board.entries) == sorted(
            e.submission_id for e in whole.entries
        )
        shown = {e.submission_id: e.ranking_value for e in whole.entries}
        assert {e.submission_id: e.ranking_value for e in board.entries} == shown


SIZES = (500, 5_000)
"""Two sizes of one Arena task, ten times apart."""
TICK = 100
"""SQLite virtual-machine instructions per tick of the progress handler (the work measured)."""


class Work:
    """The statements a block of code issued on SQLite, and the VM work each took (ticks of
    `TICK` instructions, from the connection's progress handler): a statement that scans a
    task does work in proportion to its runs, one that reads an index range does not."""

    def __init__(self) -> None:
        self.statements: list[tuple[str, int]] = []
        self.ticks = 0

    @property
    def total(self) -> int:
        return sum(ticks for _, ticks in self.statements)

    def count(self, session: Any, action: Any) -> Any:
        engine = session.get_bind()
        raw = session.connection().connection.dbapi_connection

        def tick() -> int:
            self.ticks += 1
            return 0

        def before(*_args: Any) -> None:
            self.ticks = 0

        def after(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
            self.statements.append((statement, self.ticks))

        raw.set_progress_handler(tick, TICK)
        event.listen(engine, "before_cursor_execute", before)
        event.listen(engine, "after_cursor_execute", after)
        try:
            return action()
        finally:
            event.remove(engine, "before_cursor_execute", before)
            event.remove(engine, "after_cursor_execute", after)
            raw.set_progress_handler(None, TICK)

    def heaviest(self) -> str:
        top = sorted(self.statements, key=lambda s: -s[1])[:3]
        return "\n".join(f"{ticks} ticks: {' '.join(text.split())[:300]}" for text, ticks in top)


@pytest.fixture(scope="module")
def sized(store: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[int, str]]:
    """A copy of the examples' store with one Arena task cloned at each of `SIZES`."""
    copy = tmp_path_factory.mktemp("sized") / "evalq.db"
    # SQLite's backup: the pages still in the source's write-ahead log come along
    source, target = sqlite3.connect(store.removeprefix("sqlite:///")), sqlite3.connect(copy)
    source.backup(target)
    source.close()
    target.close()
    url = f"sqlite:///{copy}"
    tasks = {
        size: cloned_task(url, template=ARENA, task_id=f"arena-{size}", size=size, seed=size)
        for size in SIZES
    }
    return url, tasks


ARENA = "arena-frontend-dark-mode"


def merge_work(url: str, task_id: str, index: int, *, held: bool) -> Work:
    """The merge's projection of one new run of the task (stored as the merge stores its
    evaluation), measured."""
    template = template_rows(url, ARENA)[index % 3]
    run, evaluation, tiers = clone(template, task_id, 9_000_000 + index, random.Random(index))
    with engine_for(url).begin() as connection:
        connection.execute(SubmissionRow.__table__.insert(), [run])
        connection.execute(EvaluationRow.__table__.insert(), [evaluation])
        if tiers:
            connection.execute(TierResultRow.__table__.insert(), tiers)
    work = Work()
    with session_scope(url) as session:
        context = task_context(session, task_id=task_id)
        loaded = queries.evaluations_of(session, submission_ids=[run["id"]])
        work.count(
            session,
            lambda: projector.project_runs(
                session,
                {task_id: context},
                [loaded[run["id"]]],
                held=[run["id"]] if held else [],
            ),
        )
    return work


@pytest.mark.parametrize("held", [False, True], ids=["counted", "held"])
def test_a_merges_projection_costs_the_same_statements_at_any_task_size(
    sized: tuple[str, dict[int, str]], held: bool
) -> None:
    """The same statements at 500 and 5,000 runs (none grows with the task), and about the
    same work: no statement of the projection scans the task."""
    url, tasks = sized
    small, big = (merge_work(url, tasks[size], size + held, held=held) for size in SIZES)
    assert [s for s, _ in small.statements] == [s for s, _ in big.statements]
    assert big.total <= 2 * small.total + 20, big.heaviest()


def read_work(url: str, task_id: str) -> Work:
    """A quiet board's reads (the API's first and last pages, the UI's page), measured."""
    work = Work()
    with session_scope(url) as session:
        work.count(
            session,
            lambda: (
                served.board(session, BoardQuery(task_id=task_id, limit=50)),
                board_page(session, BoardQuery(task_id=task_id, limit=50)),
            ),
        )
    return work


def test_a_quiet_boards_reads_do_not_scan_the_task(sized: tuple[str, dict[int, str]]) -> None:
    """A board read after the refresh costs about the same at 500 and at 5,000 runs: each of
    its statements reads the rows it shows and index ranges, never the task's every run
    (measured as SQLite VM work per statement, not time)."""
    url, tasks = sized
    for task_id in tasks.values():  # the refresh after any merge of the tests before
        with session_scope(url) as session:
            served.refresh_task(session, task_id=task_id)
    small, big = (read_work(url, tasks[size]) for size in SIZES)
    assert len(small.statements) == len(big.statements)
    assert big.total <= 2 * small.total + 50, big.heaviest()


def test_a_board_read_right_after_a_merge_ranks_by_counts_not_over_the_task(
    sized: tuple[str, dict[int, str]],
) -> None:
    """Right after a merge (before the refresh), a board read ranks its page by counting the
    rows above its first row and the ties at its ends on the standings, not with window
    functions over the task: the same statements at 500 and 5,000 runs, none of them a window
    function, and its ranks those of the whole-task board."""
    url, tasks = sized
    for size in SIZES:  # a new run merged: the stored places no longer hold for the task
        merge_work(url, tasks[size], 2 * size + 7, held=False)
    small, big = (read_work(url, tasks[size]) for size in SIZES)
    texts = [[" ".join(s.split()) for s, _ in work.statements] for work in (small, big)]
    assert texts[0] == texts[1]
    windowed = [text for text in texts[1] if " OVER (" in text.upper()]
    assert not windowed, windowed
    with session_scope(url) as session:
        for size in SIZES:
            whole = board_of(task_view(session, task_id=tasks[size]))
            for offset in (0, 17):
                page = served.board(
                    session, BoardQuery(task_id=tasks[size], limit=20, offset=offset)
                )
                assert placed(page.entries) == placed(whole.entries[offset : offset + 20])


def baseline_work(url: str) -> Work:
    """The example Arena task's baseline computed in the database (as its refresh computes it),
    measured."""
    work = Work()
    with session_scope(url) as session:
        profile = profile_named(queries.get_task(session, task_id=ARENA).profile).arena
        work.count(session, lambda: sql_baseline(session, task_id=ARENA, profile=profile))
    return work


def test_an_arena_baseline_reads_its_agents_standings_not_their_runs(
    store: str, sized: tuple[str, dict[int, str]]
) -> None:
    """The robust baseline reads how many tasks each of its agents ran (the crowd). In the
    examples' store, and in a copy where the same agents ran 5,500 more runs on two other tasks,
    it costs the same work: the standings are read from the agents' tallies (a range of the
    tasks each ran), not counted from their runs across the store (a scan of every run)."""
    url, _ = sized
    small, big = baseline_work(store), baseline_work(url)
    assert [s for s, _ in small.statements] == [s for s, _ in big.statements]
    assert big.total <= 2 * small.total + 50, big.heaviest()


def placed(entries: list[Any]) -> list[tuple[Any, ...]]:
    """Where a board lists each run: its rank, percentile, category ranks and value."""
    return [
        (e.submission_id, e.rank, e.percentile, e.category_ranks, e.ranking_value, e.held)
        for e in entries
    ]


def test_a_counted_page_holds_whatever_the_number_of_copies(store: str) -> None:
    """A page repeats the board's conditions in each of its segments and counts: a task with
    thousands of copies left out still reads (the ids are written into the statement, not
    bound once per segment and count past the bound on parameters: 250,000 in this SQLite,
    65,535 in PostgreSQL)."""
    suite = "suite-refund-agent"
    with session_scope(store) as session:
        rule = KINDS["suite"]
        kept = table.Kept(suite)
        plain = table.ranked_page(session, rule, kept, include_held=False, limit=50, offset=0)
        many = replace(kept, copies=frozenset(f"{suite}.copy{i:05d}" for i in range(20_000)))
        assert (
            table.ranked_page(session, rule, many, include_held=False, limit=50, offset=0) == plain
        )


LIVE_SIZES = (200, 2_000)
"""Two sizes of one Arena task for a live read, ten times apart."""


@pytest.fixture(scope="module")
def live_sized(store: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[int, str]]:
    """A copy of the examples' store with one Arena task cloned at each of `LIVE_SIZES`."""
    copy = tmp_path_factory.mktemp("live") / "evalq.db"
    source, target = sqlite3.connect(store.removeprefix("sqlite:///")), sqlite3.connect(copy)
    source.backup(target)
    source.close()
    target.close()
    url = f"sqlite:///{copy}"
    tasks = {
        size: cloned_task(url, template=ARENA, task_id=f"live-{size}", size=size, seed=size)
        for size in LIVE_SIZES
    }
    return url, tasks


def live_page_work(url: str, task_id: str) -> Work:
    """The UI's board page read right after a merge (its page, the verdict's summary, the
    histogram, the filter values, the copies), measured."""
    work = Work()
    with session_scope(url) as session:
        work.count(session, lambda: board_page(session, BoardQuery(task_id=task_id, limit=50)))
    return work


COUNTED = (
    "count(*) AS count_1 FROM submissions WHERE submissions.task_id",
    "count(*) AS count_1 FROM standings AS standings_1",
)
"""Statements of a live read whose work follows the task's size by design or for now: the
rescoring check's index-only counts of the task's runs (`evalq.store.standings.currency`, not
bounded yet), and the page's ranks, each a count of the keys above a listed row on an index
(`evalq.store.standings.ranked_page`, `category_ranks`): in proportion to the rank counted."""


def test_a_live_boards_summary_histogram_and_copies_are_read_from_the_tallies(
    live_sized: tuple[str, dict[int, str]],
) -> None:
    """Right after a merge (before the refresh), the UI's board page reads its summary, its
    histogram, its filter values and the task's copies from what the projector kept at merge:
    the same statements at 200 and 2,000 runs, each doing about the same work at both sizes
    (but the counts of `COUNTED`), none aggregating the task's standings, and no write."""
    url, tasks = live_sized
    for size in LIVE_SIZES:  # a new run merged: the stored figures no longer hold for the task
        merge_work(url, tasks[size], 3 * size + 11, held=False)
    small, big = (live_page_work(url, tasks[size]) for size in LIVE_SIZES)
    texts = [[" ".join(s.split()) for s, _ in work.statements] for work in (small, big)]
    assert texts[0] == texts[1]
    assert not [t for t in texts[1] if t.lower().startswith(WRITES)]
    grown = [
        f"{a} -> {b} ticks: {text[:300]}"
        for text, (_, a), (_, b) in zip(texts[1], small.statements, big.statements, strict=True)
        if b > 2 * a + 30 and not any(counted in text for counted in COUNTED)
    ]
    assert not grown, "\n".join(grown)
    read = " ".join(texts[1]).lower()
    assert "from task_tallies" in read
    aggregates = [t for t in texts[1] if "sum(case" in t.lower() and "from standings" in t.lower()]
    assert not aggregates, aggregates
