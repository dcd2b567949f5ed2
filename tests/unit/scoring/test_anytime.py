"""The anytime rule holds its false-alert level over 10,000 checks of a stationary stream
(where a fixed threshold does not), still detects a drop, and refuses what it cannot judge."""

from __future__ import annotations

import numpy as np
import pytest

from evalq.core.errors import InvalidInput
from evalq.core.monitors import MonitorRequest, parse_monitor
from evalq.scoring.anytime import anytime_state, below
from evalq.scoring.monitor import state_of

WINDOW, ALERT, LEVEL = 20, 0.65, 0.05


def _stream(rng: np.random.Generator, means: list[float]) -> list[float]:
    return [float(rng.beta(m * 8, (1 - m) * 8)) for m in means]


def _alerting(values: list[float], monitor: MonitorRequest) -> list[bool]:
    found = []
    for k in range(1, len(values) + 1):
        window = values[max(0, k - WINDOW) : k]
        if monitor.rule == "anytime":
            state = anytime_state(window, monitor=monitor, scale=(0.0, 1.0))
        else:
            state = state_of(sum(window) / len(window), len(window), monitor)
        found.append(state == "alert")
    return found


def test_10000_checks_of_a_stream_at_the_threshold_alert_at_most_the_level() -> None:
    rng = np.random.default_rng(45)
    streams = [_stream(rng, [ALERT] * 100) for _ in range(100)]  # 10,000 checks, all false
    anytime = MonitorRequest(tasks="t", alert=ALERT, last_runs=WINDOW, rule="anytime")
    fixed = MonitorRequest(tasks="t", alert=ALERT, last_runs=WINDOW)
    anytime_rate = sum(sum(_alerting(s, anytime)) for s in streams) / 10_000
    fixed_rate = sum(sum(_alerting(s, fixed)) for s in streams) / 10_000
    assert anytime_rate <= LEVEL
    assert fixed_rate > 0.3  # the fixed threshold alerts on about half the checks


def test_a_drop_well_below_the_threshold_is_detected() -> None:
    rng = np.random.default_rng(7)
    anytime = MonitorRequest(tasks="t", alert=ALERT, last_runs=WINDOW, rule="anytime")
    detected = [any(_alerting(_stream(rng, [0.45] * 30), anytime)) for _ in range(50)]
    assert sum(detected) >= 48


def test_warning_and_no_data() -> None:
    monitor = MonitorRequest(
        tasks="t", alert=0.3, warning=0.9, last_runs=WINDOW, rule="anytime", min_n=5
    )
    assert anytime_state([0.5] * 4, monitor=monitor, scale=(0.0, 1.0)) == "no data"
    assert anytime_state([0.5] * 20, monitor=monitor, scale=(0.0, 1.0)) == "warning"
    assert anytime_state([0.0] * 20, monitor=monitor, scale=(0.0, 1.0)) == "alert"
    assert anytime_state([0.95] * 20, monitor=monitor, scale=(0.0, 1.0)) == "ok"
    assert not below([0.0] * 50, 1.0, level=LEVEL, scale=(0.0, 1.0))  # nothing can lie above


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"rule": "anytime", "statistic": "quantile", "quantile": 0.5}, "rule"),
        ({"level": 0.05}, "level"),
        ({"rule": "anytime", "level": 0.7}, "level"),
        ({"rule": "sometimes"}, "rule"),
    ],
)
def test_what_the_rule_cannot_judge_is_refused_naming_the_field(
    fields: dict[str, object], field: str
) -> None:
    with pytest.raises(InvalidInput) as refused:
        parse_monitor("m", {"tasks": "t", "alert": 0.5, **fields})
    assert field in str(refused.value)


def test_a_threshold_monitor_dumps_as_before() -> None:
    dumped = MonitorRequest(tasks="t", alert=0.5).model_dump()
    assert "rule" not in dumped and "level" not in dumped
