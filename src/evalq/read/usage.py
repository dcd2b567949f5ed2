"""Where a run's usage comes from: its own timed trace, or the submitter's word.

A run whose trace has timed steps (each a tool call with a start and an end, or spans sent over
OTLP, from which its usage is taken) carries what its usage must at least be: its time and tool
calls were checked against that trace at intake (`evalq.scoring.review.USAGE_BELOW_TRACE`), so
its usage comes from a trace. Any other run's tokens, time and tool calls are only what it
reported: self-reported. Every board says which (`LeaderboardEntry.usage_source`) and how many
of its runs' usage is self-reported (`usage_note`); a profile with ``arena.usage = "traced"``
ranks only the runs whose usage comes from a trace and lists the others unranked, with
`SELF_REPORTED`, as held runs are listed.

The stored column that decides it is ``submissions.trace_seconds`` (set at intake from the
trace, `evalq.core.schemas.trace_bounds`); the board's SQL reads the same column
(`evalq.store.standings.traced`).
"""

from __future__ import annotations

from typing import Literal

UsageSource = Literal["trace", "self-reported"]

SELF_REPORTED = (
    "usage self-reported: this task's profile ranks only runs whose usage comes from a timed "
    'trace of their own (arena.usage = "traced")'
)
"""Why a run with self-reported usage is listed unranked under such a profile."""


def usage_source(trace_seconds: float | None) -> UsageSource:
    """``"trace"`` when the run carries a timed trace its usage was checked against (the
    seconds its steps span, ``submissions.trace_seconds``), else ``"self-reported"``."""
    return "self-reported" if trace_seconds is None else "trace"


def usage_note(self_reported: int, total: int) -> str | None:
    """What a board says of its runs' usage: how many of ``total`` runs only reported it
    (no timed trace to check it against); None when every run's usage comes from a trace."""
    if not self_reported:
        return None
    runs = "run is" if total == 1 else "runs is"
    return (
        f"usage of {self_reported:,} of {total:,} {runs} self-reported (no timed trace to "
        "check its time and tool calls against)"
    )
