"""What a Scylla task's run plans read of its runs, counted over the whole task.

The plans (`evalq.read.plans`) compare each variant's runs with what it planned and with its
peers, and count the runs planned and not sent as failures at the task's worst cost and time.
Those are whole-task facts: when a board's statistics are drawn over a sample of the runs
(`evalq.read.boards.sample`), they are still counted over every run, in SQL, and carried
beside the sample as a `RunCounts`; over every run they are counted from the rows themselves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class RunCounts:
    """A Scylla task's runs, each variant counted over the whole task.

    Attributes:
        sent: each variant's runs with Scylla scores, held ones included (they were sent).
        counted: each variant's runs with Scylla scores that are not held for review.
        declared: the most runs any of a variant's runs declares (``planned_runs``); a
            variant none of whose runs declares a plan is absent.
        worst_cost / worst_time: the highest Scylla cost and duration among the runs (None
            when no run has one): what a run planned and not sent counts at.
    """

    sent: Mapping[str, int]
    counted: Mapping[str, int]
    declared: Mapping[str, int]
    worst_cost: float | None
    worst_time: float | None
