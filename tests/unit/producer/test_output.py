"""The CLI's progress: drawn on a terminal's stderr while a long step runs, never in a pipe."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from evalq.producer.cli import output


def run_step(monkeypatch: pytest.MonkeyPatch, *, terminal: bool) -> str:
    """What ``working`` draws around a step on a console that is (or is not) a terminal."""
    drawn = io.StringIO()
    console = Console(file=drawn, force_terminal=terminal, width=80)
    monkeypatch.setattr(output, "progress_console", console)
    with output.working("reading the report of arena-x"):
        console.print("the step's own line")  # the progress redraws around it
    return drawn.getvalue()


def test_a_terminal_sees_what_is_being_done(monkeypatch: pytest.MonkeyPatch) -> None:
    drawn = run_step(monkeypatch, terminal=True)
    assert "reading the report of arena-x" in drawn
    assert "0:00:0" in drawn  # the time elapsed


def test_a_pipe_sees_nothing_but_the_step_s_own_output(monkeypatch: pytest.MonkeyPatch) -> None:
    drawn = run_step(monkeypatch, terminal=False)
    assert drawn == "the step's own line\n"


def test_the_progress_is_drawn_on_stderr_so_stdout_stays_whole() -> None:
    assert output.progress_console.stderr
