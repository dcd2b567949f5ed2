"""Outlier detection (spec 000, "Outlier Detection"): runs that look too good to be true."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from evalq.core.profile import ArenaProfile
from evalq.scoring.arena.run import ArenaRun

EXTREMELY_EFFICIENT_TOKENS = "extremely_efficient_tokens"
EXTREMELY_FAST = "extremely_fast"
MINIMAL_TOOL_USAGE = "minimal_tool_usage"
MANUAL_REVIEW = "manual_review"


@dataclass(frozen=True)
class OutlierFlag:
    """A run with enough suspicious indicators to be reviewed by a person."""

    submission_id: str
    task_id: str
    flags: tuple[str, ...]
    recommended_action: str = MANUAL_REVIEW


def run_flags(run: ArenaRun, token_threshold: float, profile: ArenaProfile) -> tuple[str, ...]:
    """The suspicious indicators of one run.

    - ``extremely_efficient_tokens``: tokens strictly below ``token_threshold``.
    - ``extremely_fast``: a measured time strictly below ``profile.outlier_fast_seconds``. A run
      without a time is not flagged (docs/scoring.md; the spec's default of 0 flagged every one).
    - ``minimal_tool_usage``: exactly one tool call.
    """
    flags = []
    if run.total_tokens < token_threshold:
        flags.append(EXTREMELY_EFFICIENT_TOKENS)
    time = run.measured_time
    if time is not None and time < profile.outlier_fast_seconds:
        flags.append(EXTREMELY_FAST)
    if run.tool_calls == 1:
        flags.append(MINIMAL_TOOL_USAGE)
    return tuple(flags)


def detect_outliers(runs: Sequence[ArenaRun], profile: ArenaProfile) -> list[OutlierFlag]:
    """Runs with at least ``profile.outlier_min_flags`` indicators (spec: 2), in input order.

    The token threshold is ``profile.outlier_token_fraction`` (spec: 0.1) times the median
    tokens of the run's own task: runs are grouped by ``task_id`` first, because token counts of
    different tasks are not comparable. An empty input gives an empty list.
    """
    by_task: dict[str, list[int]] = {}
    for run in runs:
        by_task.setdefault(run.task_id, []).append(run.total_tokens)
    thresholds = {
        task_id: statistics.median(tokens) * profile.outlier_token_fraction
        for task_id, tokens in by_task.items()
    }
    outliers = []
    for run in runs:
        flags = run_flags(run, thresholds[run.task_id], profile)
        if len(flags) >= profile.outlier_min_flags:
            outliers.append(OutlierFlag(run.submission_id, run.task_id, flags))
    return outliers
