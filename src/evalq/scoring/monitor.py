"""A monitor's state from its statistic, and the event a change of state sends.

States: ``no data`` under ``min_n`` runs in the window; else ``alert`` below the alert
threshold, ``warning`` below the warning threshold, ``ok`` otherwise (a monitor watches for a
drop: every ranking value is better higher). Events, decided from the state now and the last
event sent (not from the previous state, so nothing is lost or repeated when a state passes
through ``no data``):

- ``monitor.alert``: the state is warning or alert and the last event was not an alert for
  this state (first entry, or warning <-> alert), or it was but ``renotify`` has passed since;
- ``monitor.resolved``: the state is ok and the last event was an alert;
- nothing otherwise: ``no data`` neither alerts nor resolves (it is shown, not sent).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from evalq.core.monitors import MonitorEventType, MonitorRequest, MonitorState


def state_of(value: float | None, n: int, monitor: MonitorRequest) -> MonitorState:
    """The state a window's statistic ``value`` over ``n`` runs puts the task in."""
    if value is None or n < monitor.min_n:
        return "no data"
    if value < monitor.alert:
        return "alert"
    if monitor.warning is not None and value < monitor.warning:
        return "warning"
    return "ok"


@dataclass(frozen=True)
class Notified:
    """The last event sent for one task under one monitor."""

    event: MonitorEventType | None
    state: MonitorState | None
    at: datetime | None


def event_of(
    state: MonitorState, last: Notified, *, now: datetime, renotify: timedelta | None
) -> tuple[MonitorEventType, bool] | None:
    """The event to send for ``state`` after ``last`` (and whether it is a re-notification);
    None when nothing is to be sent."""
    alerting = last.event == "monitor.alert"
    if state in ("warning", "alert"):
        if not alerting or last.state != state:
            return "monitor.alert", False
        due = renotify is not None and last.at is not None and now - last.at >= renotify
        return ("monitor.alert", True) if due else None
    if state == "ok" and alerting:
        return "monitor.resolved", False
    return None
