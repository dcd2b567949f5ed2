"""The reviewing task and two-agent trace shared by queue tests, drills and benchmarks."""

from __future__ import annotations

import copy
from typing import Any

REFERENCE = (
    "The paper proposes a sparse attention scheme for long documents and evaluates it on three "
    "summarisation benchmarks. The method is clearly described, but the baselines are weak and "
    "the ablation on window size is missing."
)

_TRACE: dict[str, Any] = {
    "steps": [
        {"tool": "search", "agent": "manager", "context": "find"},
        {"tool": "read", "agent": "researcher"},
        {"tool": "write", "agent": "researcher", "context": "draft"},
    ],
    "messages": [
        {"sender": "manager", "receiver": "researcher", "type": "task_request"},
        {"sender": "researcher", "receiver": "manager", "type": "result_delivery"},
    ],
}


def review_task(task_id: str, *, reference: str = REFERENCE) -> dict[str, Any]:
    """A review task with one reference, a no-errors criterion, a reference tool graph
    (search -> read -> write) and the optimal tool per context."""
    return {
        "id": task_id,
        "category": "data_analysis",
        "reference_outputs": [reference],
        "success_criteria": [{"type": "no_errors"}],
        "reference_tool_graph": {
            "edges": [["search", "read"], ["read", "write"]],
            "start": "search",
            "end": "write",
        },
        "optimal_tools": {"find": "search", "draft": "write"},
    }


def review_trace() -> dict[str, Any]:
    """A three-step, two-agent trace that follows the task's reference path (a fresh copy)."""
    return copy.deepcopy(_TRACE)
