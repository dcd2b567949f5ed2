"""A monitor's state for one task: the fixed threshold, or the anytime-valid rule
(`evalq.scoring.anytime`), which reads the window's runs oldest first."""

from __future__ import annotations

from evalq.core.monitors import MonitorRequest, MonitorState
from evalq.scoring.anytime import anytime_state
from evalq.scoring.kinds import KindRule
from evalq.scoring.monitor import state_of
from evalq.store import monitors as store


def monitor_state(
    *, rule: KindRule, monitor: MonitorRequest, found: store.Window, value: float | None
) -> MonitorState:
    """The state ``found`` (the monitor's window of a task, newest run first) and its
    statistic ``value`` put the task in under the monitor's rule."""
    if monitor.rule != "anytime":
        return state_of(value, len(found.values), monitor)
    if monitor.statistic == "pass_rate":
        values, scale = [1.0 if p else 0.0 for p in found.passed], (0.0, 1.0)
    else:
        values, scale = list(found.values), rule.scale
    return anytime_state(values[::-1], monitor=monitor, scale=scale)
