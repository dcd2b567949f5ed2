"""Where a run's usage comes from, and what a board says of it."""

from __future__ import annotations

from evalq.read.usage import USAGE_LABELS, usage_note, usage_source


def test_only_a_collected_trace_reads_as_collected() -> None:
    assert usage_source("collected") == "collected-trace"
    assert usage_source("submitted") == "own-trace"  # consistent with its usage, not checked
    assert usage_source(None) == "self-reported"
    assert USAGE_LABELS["own-trace"] == "own trace (unverified)"


def test_the_board_counts_usage_not_collected_in_words() -> None:
    assert usage_note(0, 0, 40) is None
    assert usage_note(12, 0, 40) == (
        "usage of 12 of 40 runs is self-reported (not from a collected trace)"
    )
    assert usage_note(12, 4, 40) == (
        "usage of 12 of 40 runs is self-reported (not from a collected trace; 4 of them with a "
        "trace of their own, which agrees with their usage but was not collected)"
    )
    one = usage_note(1, 0, 1)
    assert one is not None and "usage of 1 of 1 run is self-reported" in one
