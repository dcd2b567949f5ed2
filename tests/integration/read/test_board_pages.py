"""A board's pages (issue 27): ``limit``/``offset`` list the whole board's entries in its order,
with its ranks, percentiles, category ranks and interval, whether the page was ranked from the
narrow rows (Arena, PeerRead) or cut from the whole board (Scylla, suite)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select
from tests.support.at_rest import settle

from evalq.core.errors import InvalidInput
from evalq.read.leaderboard import leaderboard
from evalq.store.db import session_scope
from evalq.store.models import SubmissionRow, TaskRow


@pytest.fixture(autouse=True)
def at_rest(store: str) -> None:
    """Each case compares two reads of the shared store: bring it to rest first (`settle`), so
    that nothing an earlier case of this worker left pending lands between them."""
    settle(store)


WHOLE = ("entries", "offset", "limit", "total")
"""What differs between a page and the whole board; every other field is the board's."""


def task_ids(url: str) -> list[str]:
    with session_scope(url) as session:
        return list(session.scalars(select(TaskRow.id).order_by(TaskRow.id)))


def pages(url: str, task_id: str, size: int, **filters: Any) -> list[Any]:
    found = []
    with session_scope(url) as session:
        offset = 0
        while True:
            page = leaderboard(session, task_id=task_id, limit=size, offset=offset, **filters)
            found.append(page)
            offset += size
            if offset >= (page.total or 0):
                return found


@pytest.mark.parametrize("size", [1, 3, 1000])
def test_the_pages_of_every_example_board_list_the_whole_board(store: str, size: int) -> None:
    kinds = set()
    for task_id in task_ids(store):
        with session_scope(store) as session:
            whole = leaderboard(session, task_id=task_id)
        kinds.add(whole.kind)
        found = pages(store, task_id, size)
        assert [e for p in found for e in p.entries] == whole.entries, task_id
        assert whole.total == len(whole.entries) and whole.limit is None
        for number, page in enumerate(found):
            assert (page.offset, page.limit, page.total) == (number * size, size, whole.total)
            assert page.model_dump(exclude=set(WHOLE)) == whole.model_dump(exclude=set(WHOLE))
    assert kinds == {"arena", "peerread", "scylla", "suite"}


@pytest.mark.parametrize(
    "filters",
    [
        {"model": "o3"},
        {"tool": "aider"},
        {"status": "done"},
        {"status": "degraded"},
        {"include_held": True},
        {"metadata": {"experiment": "baseline"}},
    ],
)
def test_filtered_pages_are_the_filtered_board(store: str, filters: dict[str, Any]) -> None:
    for task_id in task_ids(store):
        with session_scope(store) as session:
            whole = leaderboard(session, task_id=task_id, **filters)
        found = pages(store, task_id, 2, **filters)
        assert [e for p in found for e in p.entries] == whole.entries, (task_id, filters)
        assert found[0].confidence_interval == whole.confidence_interval
        if "status" in filters:
            assert all(e.status == filters["status"] for e in whole.entries)


def test_a_held_run_is_paged_after_the_ranked_ones(store: str) -> None:
    with session_scope(store) as session:
        held = session.scalar(
            select(SubmissionRow.task_id).where(SubmissionRow.review == "flagged")
        )
        assert held is not None
        whole = leaderboard(session, task_id=held)
        last = leaderboard(session, task_id=held, limit=1, offset=(whole.total or 0) - 1)
    assert last.entries[0].held and last.entries[0].rank is None
    assert last.entries == whole.entries[-1:]


def test_a_bad_page_is_refused_naming_the_field(store: str) -> None:
    with session_scope(store) as session:
        for bad, field in (
            ({"limit": 0}, "limit"),
            ({"limit": 1001}, "limit"),
            ({"offset": -1}, "offset"),
            ({"status": "failed"}, "status"),
        ):
            with pytest.raises(InvalidInput) as refused:
                leaderboard(session, task_id="arena-frontend-dark-mode", **bad)
            assert [name for name, _ in refused.value.problems] == [field]
