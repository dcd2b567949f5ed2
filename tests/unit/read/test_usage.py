"""Where a run's usage comes from, and what a board says of it."""

from __future__ import annotations

from evalq.read.usage import usage_note, usage_source


def test_a_timed_trace_makes_usage_traced_anything_else_self_reported() -> None:
    assert usage_source(1087.5) == "trace"
    assert usage_source(0.0) == "trace"  # steps that start and end at once: still a trace
    assert usage_source(None) == "self-reported"


def test_the_board_counts_self_reported_usage_in_words() -> None:
    assert usage_note(0, 40) is None
    assert usage_note(12, 40) == (
        "usage of 12 of 40 runs is self-reported (no timed trace to check its time and tool "
        "calls against)"
    )
    one = usage_note(1, 1)
    assert one is not None and "usage of 1 of 1 run is self-reported" in one
