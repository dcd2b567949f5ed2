"""The refresh of a large Scylla or suite task reads a bounded number of runs' documents
(`evalq.read.boards.sample`): the same at 4x the runs, and the figures say they are sampled."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import func, select
from tests.support.cloned_task import cloned_task

from evalq.read import served
from evalq.read.boards import sample
from evalq.read.boards.query import BoardQuery
from evalq.read.leaderboard import BoardFigures
from evalq.read.view import TaskContext
from evalq.store import standings as table
from evalq.store.db import session_scope
from evalq.store.models import SubmissionRow

SCYLLA, SUITE = "scylla-token-bucket", "suite-refund-agent"
PER_VARIANT = 25
"""`sample.SAMPLED_RUNS` in these tests: a sample of a few hundred runs stands for 1,000's."""
SIZES = (300, 1_200)


@pytest.fixture(scope="module")
def sized(
    store: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, dict[tuple[str, int], str]]]:
    """A copy of the examples' store with the Scylla and suite examples cloned at `SIZES`."""
    copy = tmp_path_factory.mktemp("sampled") / "evalq.db"
    source, target = sqlite3.connect(store.removeprefix("sqlite:///")), sqlite3.connect(copy)
    source.backup(target)
    source.close()
    target.close()
    url = f"sqlite:///{copy}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sample, "SAMPLED_RUNS", PER_VARIANT)
        tasks = {
            (template, size): cloned_task(
                url, template=template, task_id=f"{template}-{size}", size=size, seed=size
            )
            for template in (SCYLLA, SUITE)
            for size in SIZES
        }
        yield url, tasks


def decodes_during(url: str, task_id: str, monkeypatch: pytest.MonkeyPatch) -> int:
    """How many runs' documents the task's refresh decoded (`TaskContext.scored`, the one
    place a read decodes a run's payload and scores), the real method counted."""
    calls = 0
    real: Callable[..., Any] = TaskContext.scored

    def counted(self: TaskContext, *args: Any) -> Any:
        nonlocal calls
        calls += 1
        return real(self, *args)

    monkeypatch.setattr(TaskContext, "scored", counted)
    with session_scope(url) as session:
        served.refresh_task(session, task_id=task_id)
    monkeypatch.setattr(TaskContext, "scored", real)
    return calls


def figures_of(url: str, task_id: str) -> BoardFigures:
    with session_scope(url) as session:
        stored = table.stored_figures(session, task_id=task_id)
        assert stored is not None
        return BoardFigures.model_validate(stored.data)


def test_a_scylla_refresh_decodes_a_bounded_sample_whatever_the_tasks_size(
    sized: tuple[str, dict[tuple[str, int], str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, tasks = sized
    monkeypatch.setattr(sample, "SAMPLED_RUNS", PER_VARIANT)
    small, large = (tasks[(SCYLLA, size)] for size in SIZES)
    decoded = {size: decodes_during(url, tasks[(SCYLLA, size)], monkeypatch) for size in SIZES}
    with session_scope(url) as session:
        variants = session.scalar(
            select(func.count(func.distinct(SubmissionRow.variant))).where(
                SubmissionRow.task_id == large
            )
        )
    assert variants and variants > 1
    # every variant has more runs than the sample keeps: the same runs decoded at both sizes
    assert decoded[SIZES[0]] == decoded[SIZES[1]] == variants * PER_VARIANT
    for task_id, size in ((small, SIZES[0]), (large, SIZES[1])):
        figures = figures_of(url, task_id)
        assert figures.sampled is not None and figures.runs == size
        assert figures.sampled.runs == variants * PER_VARIANT
        assert figures.sampled.note in figures.rank_uncertainty.note
        assert figures.variants and figures.analysis and figures.comparison
        # each variant ranked over its sample, and saying how many runs it has in all
        assert sum(v.sampled_from or 0 for v in figures.variants) == size - held(url, task_id)
        assert all(v.runs <= PER_VARIANT for v in figures.variants)


def held(url: str, task_id: str) -> int:
    with session_scope(url) as session:
        return int(
            session.scalar(
                select(func.count()).where(
                    SubmissionRow.task_id == task_id, SubmissionRow.review == "flagged"
                )
            )
            or 0
        )


def test_a_large_suite_refresh_decodes_no_run(
    sized: tuple[str, dict[tuple[str, int], str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, tasks = sized
    for size in SIZES:
        task_id = tasks[(SUITE, size)]
        assert decodes_during(url, task_id, monkeypatch) == 0
        figures = figures_of(url, task_id)
        assert figures.rank_uncertainty.resamples == 0
        assert "at most 20 ranked entries" in figures.rank_uncertainty.note
        assert figures.runs == size and figures.sampled is None
        # each ranked entry of a page says why it has no interval, as the whole board does
        with session_scope(url) as session:
            page = served.board(session, BoardQuery(task_id=task_id, limit=5))
            whole = served.board(session, BoardQuery(task_id=task_id))
        assert page.entries and page.rank_uncertainty == whole.rank_uncertainty
        ranked = {e.submission_id: e for e in whole.entries if e.rank is not None}
        for entry in page.entries:
            if entry.rank is not None:
                assert entry.rank_interval_note == ranked[entry.submission_id].rank_interval_note
                assert entry.rank_interval_note == figures.entry_note


def test_below_the_sample_the_figures_are_drawn_over_every_run(
    sized: tuple[str, dict[tuple[str, int], str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, tasks = sized
    task_id = tasks[(SCYLLA, SIZES[0])]
    monkeypatch.setattr(sample, "SAMPLED_RUNS", SIZES[0])
    assert decodes_during(url, task_id, monkeypatch) == SIZES[0]
    figures = figures_of(url, task_id)
    assert figures.sampled is None and figures.runs == SIZES[0]
    assert figures.variants and all(v.sampled_from is None for v in figures.variants)
