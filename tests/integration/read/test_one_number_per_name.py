"""A run's page names its Arena overall as the number its board ranks it by; the score after
the task's difficulty factor, where it differs, is named as such beside it."""

from __future__ import annotations

from fastapi.testclient import TestClient
from tests.support.ui import sign_in

from evalq.core.settings import Settings
from evalq.producer.api.app import create_app
from evalq.read.leaderboard import leaderboard
from evalq.store.db import session_scope
from evalq.store.keys import create_key

ARENA = "arena-frontend-dark-mode"  # an advanced task: its difficulty factor is not 1


def test_the_run_page_shows_the_number_the_board_ranks_by(store: str) -> None:
    with session_scope(store) as session:
        board = leaderboard(session, task_id=ARENA)
        key = create_key(session, name="one-number", scopes=["read"])
    entry = next(e for e in board.entries if e.overall != e.overall_adjusted)
    settings = Settings(database_url=store, auth_required=True)
    with TestClient(create_app(settings), base_url="https://testserver") as browser:
        assert sign_in(browser, key).status_code == 303
        page = browser.get(f"/ui/runs/{entry.submission_id}").text
    cell = page[page.index('data-score="arena-overall"') :].split("</td>", 1)[0]
    assert f">{entry.overall:.2f}, the number the board ranks by" in cell
    assert f"{entry.overall_adjusted:.2f} after the task's difficulty factor" in cell
