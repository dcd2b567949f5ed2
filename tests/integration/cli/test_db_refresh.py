"""`evalq db refresh`: what a worker's refresh stores (standings, places, board figures), for a
store upgraded to them, without waiting for a first read to build them."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import delete, func, select
from typer.testing import CliRunner

from evalq.producer.cli import app
from evalq.store.db import session_scope
from evalq.store.models import BoardFiguresRow, StandingRow
from tests.support.small_board import TASK_ID, small_board_store


def test_refresh_stores_every_run_s_standing_and_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, runs = small_board_store(tmp_path, monkeypatch)
    with session_scope(url) as session:  # as a store migrated from before the read model
        session.execute(delete(StandingRow))
        session.execute(delete(BoardFiguresRow))
    result = CliRunner().invoke(app, ["db", "refresh"])
    assert result.exit_code == 0, result.output
    assert f"{TASK_ID}: baseline v" in result.output
    with session_scope(url) as session:
        placed = session.scalar(select(func.count()).where(StandingRow.place.is_not(None)))
        stored = session.scalar(select(func.count()).where(StandingRow.task_id == TASK_ID))
        figures = session.get(BoardFiguresRow, TASK_ID)
    assert stored == runs and placed and figures is not None
    missing = CliRunner().invoke(app, ["db", "refresh", "no-such-task"])
    assert missing.exit_code != 0 and "no-such-task" in missing.output
