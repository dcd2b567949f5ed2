"""A submission shows one Arena number: against its task's current baseline, as its board does."""

from __future__ import annotations

import pytest

from evalq.core.settings import Settings
from evalq.read.leaderboard import leaderboard
from evalq.service.client import Client
from evalq.store.db import session_scope

TASK = "arena-frontend-dark-mode"


def test_status_and_leaderboard_show_the_same_arena_overall(store: str) -> None:
    with session_scope(store) as session:
        board = leaderboard(session, task_id=TASK)
    client = Client(Settings(database_url=store))
    moved = 0
    for entry in board.entries:
        result = client.get_result(entry.submission_id)
        arena = result["scores"]["arena"]
        assert result["baseline_version"] == board.baseline_version
        assert arena["overall_score"] == pytest.approx(entry.overall_adjusted)
        assert arena["unadjusted_score"] == pytest.approx(entry.overall)
        merged = result["merged"]
        assert merged["baseline_version"] <= board.baseline_version
        moved += merged["arena"]["overall_score"] != arena["overall_score"]
    # runs merged against an older baseline (the first ones, against the defaults) show the
    # current score; the one they were merged with stays in the history
    assert moved > 0
