"""Where a run's trace came from, decided once at intake and stored with the run.

A trace that agrees with the usage it came with proves nothing by itself: a submitter who halves
its usage can invent timed steps that span exactly the halved time. What vouches for a trace is
who assembled it. So a run's trace has one of two provenances, stored as
``submissions.trace_provenance``:

- ``collected``: evalq's OTLP intake assembled the run from spans sent under an API key the
  task names in ``trusted_trace_keys`` (the key its agents' runtime exports with), so its usage
  was taken from spans the submitter did not write into a submission body;
- ``submitted``: any other trace, a timed trace inside the submission body, or spans sent under
  a key the task does not trust. It is checked for consistency with its usage
  (`evalq.scoring.review`), but consistency is not provenance.

A run with neither (no timed trace, not from the OTLP intake) has no provenance (None): its usage
is self-reported. The read side says which (`evalq.read.usage`).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Literal

TraceProvenance = Literal["collected", "submitted"]


def trace_provenance(
    *, timed: bool, sent_by: str | None, trusted: Collection[str]
) -> TraceProvenance | None:
    """The provenance of a new run's trace.

    Args:
        timed: the run carries timed steps (``submissions.trace_seconds`` is set).
        sent_by: the name of the API key whose spans the OTLP intake assembled the run from;
            None for a run whose body was submitted as it is.
        trusted: the task's ``trusted_trace_keys``.
    """
    if sent_by is not None and sent_by in trusted:
        return "collected"
    if sent_by is not None or timed:
        return "submitted"
    return None
