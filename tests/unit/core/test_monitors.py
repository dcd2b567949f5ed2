"""A monitor's definition is refused naming the field and the rule it breaks."""

from __future__ import annotations

from typing import Any

import pytest

from evalq.core.errors import InvalidInput
from evalq.core.monitors import parse_monitor

GOOD = {"tasks": "arena-*", "alert": 50}


@pytest.mark.parametrize(
    ("name", "changes", "field"),
    [
        ("Bad Name", {}, "name"),
        ("m", {"alert": None}, "alert"),
        ("m", {"tasks": ""}, "tasks"),
        ("m", {"statistic": "median"}, "statistic"),
        ("m", {"statistic": "quantile"}, "quantile"),
        ("m", {"quantile": 0.5}, "quantile"),
        ("m", {"quantile": 1.5, "statistic": "quantile"}, "quantile"),
        ("m", {"warning": 40}, "warning"),
        ("m", {"last_runs": 3, "last_hours": 2}, "last_hours"),
        ("m", {"last_runs": 3, "min_n": 4}, "min_n"),
        ("m", {"by": "model"}, "group"),
        ("m", {"by": "colour", "group": "red"}, "by"),
        ("m", {"renotify_minutes": 0}, "renotify_minutes"),
        ("m", {"colour": "red"}, "colour"),
    ],
)
def test_a_bad_monitor_names_the_field(name: str, changes: dict[str, Any], field: str) -> None:
    data = {k: v for k, v in (GOOD | changes).items() if v is not None}
    with pytest.raises(InvalidInput) as raised:
        parse_monitor(name, data)
    assert field in [f for f, _ in raised.value.problems], raised.value.problems


def test_a_good_monitor_and_its_default_window() -> None:
    found = parse_monitor("arena.quality", GOOD | {"by": "metadata.branch", "group": "main"})
    assert found.window() == "last 20 runs" and found.min_n == 5
    assert parse_monitor("m", GOOD | {"last_hours": 6}).window() == "last 6 hours"
