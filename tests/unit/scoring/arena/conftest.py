"""Shared builders for the Arena tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from evalq.core.profile import ArenaProfile, Profile
from evalq.scoring.arena import ArenaRun, Baseline

BASELINE_FIGURES: dict[str, Any] = {
    "submission_count": 10,
    "median_tokens": 3000.0,
    "min_tokens": 1000.0,
    "max_tokens": 5000.0,
    "q25_tokens": 2000.0,
    "q75_tokens": 4000.0,
    "median_tool_calls": 6.0,
    "min_tool_calls": 2.0,
    "max_tool_calls": 12.0,
    "median_execution_time": 300.0,
    "min_execution_time": 60.0,
    "max_execution_time": 1800.0,
    "median_cost": 0.1,
    "min_cost": 0.01,
    "max_cost": 0.21,
    "median_iterations": 3.0,
    "is_default": False,
    "time_is_default": False,
    "cost_is_default": False,
}


@pytest.fixture
def profile() -> Profile:
    return Profile()


@pytest.fixture
def arena() -> ArenaProfile:
    return ArenaProfile()


@pytest.fixture
def make_baseline() -> Callable[..., Baseline]:
    """Baseline with tokens 1000..5000, tool calls 2..12, time 60..1800 s, cost 0.01..0.21,
    median iterations 3; keyword arguments override any field."""

    def build(**overrides: Any) -> Baseline:
        return Baseline(**{**BASELINE_FIGURES, **overrides})

    return build


@pytest.fixture
def make_run() -> Callable[..., ArenaRun]:
    """A run on task "t1" with 2000 tokens, 5 tool calls, 1 iteration, no time or cost."""

    def build(**overrides: Any) -> ArenaRun:
        fields: dict[str, Any] = {
            "submission_id": "s1",
            "task_id": "t1",
            "total_tokens": 2000,
            "tool_calls": 5,
            "iterations": 1,
            "tool": "cli",
            "model": "gpt-4o",
        }
        return ArenaRun(**{**fields, **overrides})

    return build
