"""`evalq leaderboard` reads at 100 columns: the kind's own columns first, nothing cut off."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from evalq.producer.cli import EXAMPLES
from evalq.producer.cli.boards import KIND_COLUMNS, leaderboard_table
from evalq.read.leaderboard import leaderboard
from evalq.store.db import session_scope

TASKS = [task["id"] for task in json.loads((EXAMPLES / "tasks.json").read_text())]


def rendered(store: str, task_id: str, *, width: int, wide: bool = False) -> tuple[str, list[str]]:
    """The table as a terminal of ``width`` columns shows it, and the board's submission ids."""
    with session_scope(store) as session:
        board = leaderboard(session, task_id=task_id)
    out = io.StringIO()
    Console(file=out, width=width, color_system=None).print(leaderboard_table(board, wide=wide))
    return out.getvalue(), [entry.submission_id for entry in board.entries]


@pytest.mark.parametrize("task_id", TASKS)
def test_every_id_and_score_is_whole_at_100_columns(store: str, task_id: str) -> None:
    text, ids = rendered(store, task_id, width=100)
    assert "…" not in text  # rich marks what it cut with an ellipsis
    assert max(map(len, text.splitlines())) <= 100
    for submission_id in ids:
        assert submission_id in text


@pytest.mark.parametrize("task_id", TASKS)
def test_the_kind_s_own_columns_come_right_after_the_submission(store: str, task_id: str) -> None:
    with session_scope(store) as session:
        kind = leaderboard(session, task_id=task_id).kind
    text, _ = rendered(store, task_id, width=120)
    header = next(line for line in text.splitlines() if " rank " in f" {line} ")
    names = [cell.strip() for cell in header.strip("┃│ ").split("┃") if cell.strip()]
    assert names == ["rank", "submission", "tool / model", *KIND_COLUMNS[kind], "notes"]


@pytest.mark.parametrize("task_id", TASKS)
def test_each_run_names_its_tool_and_model_so_the_board_says_who_won(
    store: str, task_id: str
) -> None:
    with session_scope(store) as session:
        board = leaderboard(session, task_id=task_id)
    text, _ = rendered(store, task_id, width=200)
    for entry in board.entries:
        line = next(row for row in text.splitlines() if f" {entry.submission_id} " in row)
        assert f" {entry.tool} / {entry.model} " in line, line


def test_wide_adds_every_arena_figure(store: str) -> None:
    text, _ = rendered(store, TASKS[0], width=200, wide=True)
    header = next(line for line in text.splitlines() if " rank " in f" {line} ")
    assert " tool / model " in header
    assert all(f" {name} " in header for name in ("adj", "eff", "speed", "cost", "pct"))


def test_the_run_that_tries_to_instruct_its_evaluator_is_noted(store: str) -> None:
    """As `make demo` shows it (no judge): the injection attempt is ranked on the output
    without its marked sentences (4th; 2nd while they counted towards its similarity), with
    a note."""
    text, ids = rendered(store, "peerread-salience-gating", width=200)
    lines = {i: next(line for line in text.splitlines() if f" {i} " in line) for i in ids}
    noted = [i for i, line in lines.items() if "injection attempt" in line]
    assert noted == ["peer-05-injection"]
    assert ids.index("peer-05-injection") == 3  # 4th, as README's board shows
