"""A monitor's state and the events its changes send (`evalq.scoring.monitor`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from evalq.core.monitors import MonitorRequest, MonitorState
from evalq.scoring.monitor import Notified, event_of, state_of

MONITOR = MonitorRequest(tasks="t", warning=0.9, alert=0.8, min_n=3, last_runs=5)
T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "n", "state"),
    [
        (None, 0, "no data"),
        (0.1, 2, "no data"),
        (0.79, 3, "alert"),
        (0.8, 3, "warning"),
        (0.89, 5, "warning"),
        (0.9, 5, "ok"),
    ],
)
def test_the_state_of_a_window(value: float | None, n: int, state: str) -> None:
    assert state_of(value, n, MONITOR) == state


def _walk(states: list[MonitorState], renotify: timedelta | None = None) -> list[str]:
    """The events a sequence of checks (a minute apart) sends."""
    last, sent = Notified(None, None, None), []
    for minute, state in enumerate(states):
        now = T0 + timedelta(minutes=minute)
        found = event_of(state, last, now=now, renotify=renotify)
        if found is not None:
            event, again = found
            sent.append(f"{event}{' again' if again else ''}:{state}")
            last = Notified(event, state, now)
    return sent


def test_a_drop_alerts_once_and_a_recovery_resolves_once() -> None:
    assert _walk(["ok", "alert", "alert", "alert", "ok", "ok"]) == [
        "monitor.alert:alert",
        "monitor.resolved:ok",
    ]


def test_no_data_sends_nothing_and_loses_nothing() -> None:
    assert _walk(["no data", "no data", "ok", "no data"]) == []
    # an alert that passes through no data is neither sent again nor left unresolved
    assert _walk(["alert", "no data", "alert", "no data", "ok"]) == [
        "monitor.alert:alert",
        "monitor.resolved:ok",
    ]


def test_warning_and_alert_each_alert_and_renotify_repeats_when_due() -> None:
    assert _walk(["warning", "alert", "warning", "ok"]) == [
        "monitor.alert:warning",
        "monitor.alert:alert",
        "monitor.alert:warning",
        "monitor.resolved:ok",
    ]
    assert _walk(["alert"] * 6, renotify=timedelta(minutes=2)) == [
        "monitor.alert:alert",
        "monitor.alert again:alert",
        "monitor.alert again:alert",
    ]
