"""Where a run's usage comes from: a trace evalq collected, the run's own trace, or its word.

A trace that agrees with its usage is not a checked one: halved usage with invented timed steps
spanning exactly the halved time agrees with itself. So the boards read who assembled a run's
trace (`evalq.core.provenance`, stored at intake as ``submissions.trace_provenance``), not
whether the trace is consistent:

- ``collected-trace``: the OTLP intake assembled the run from spans sent under an API key its
  task trusts (``trusted_trace_keys``): its usage was taken from those spans;
- ``own-trace``: the run carries a trace of its own (timed steps in its body, or spans sent under
  a key the task does not trust). Its time and tool calls were checked against that trace at
  intake (`evalq.scoring.review.USAGE_BELOW_TRACE`), but the submitter wrote both: unverified;
- ``self-reported``: no trace; its tokens, time and tool calls are only what it reported.

Every board says which (`LeaderboardEntry.usage_source`) and how many of its runs' usage was
not collected (`usage_note`); a profile with ``arena.usage = "traced"`` ranks only the runs
whose trace was collected and lists the others unranked, with `SELF_REPORTED`, as held runs
are listed. The board's SQL reads the same column (`evalq.store.standings.collected`).
"""

from __future__ import annotations

from typing import Literal

UsageSource = Literal["collected-trace", "own-trace", "self-reported"]
USAGE_LABELS: dict[UsageSource, str] = {
    "collected-trace": "collected trace",
    "own-trace": "own trace (unverified)",
    "self-reported": "self-reported",
}
"""How every door writes a run's usage source: a trace of its own never reads as checked."""

SELF_REPORTED = (
    "usage self-reported: this task's profile ranks only runs whose usage comes from a trace "
    "collected from the agents' runtime (arena.usage = \"traced\"), and this run's was not"
)
"""Why a run whose trace was not collected is listed unranked under such a profile."""


def usage_source(trace_provenance: str | None) -> UsageSource:
    """What a board says of a run's usage, from its stored trace provenance
    (``submissions.trace_provenance``: ``collected``, ``submitted`` or None)."""
    if trace_provenance == "collected":
        return "collected-trace"
    return "own-trace" if trace_provenance == "submitted" else "self-reported"


def usage_note(uncollected: int, own_trace: int, total: int) -> str | None:
    """What a board says of its runs' usage: how many of ``total`` runs' usage was not taken
    from a collected trace (``uncollected``), and how many of those carry a trace of their own
    (``own_trace``); None when every run's trace was collected."""
    if not uncollected:
        return None
    runs = "run is" if total == 1 else "runs is"
    note = f"usage of {uncollected:,} of {total:,} {runs} self-reported (not from a collected trace"
    if own_trace:
        note += (
            f"; {own_trace:,} of them with a trace of their own, which agrees with their usage "
            "but was not collected"
        )
    return note + ")"
