"""A run page's trace summary: steps under their agents, the rest counted, edges counted."""

from __future__ import annotations

from evalq.core.schemas import Submission
from evalq.ui.run import SHOWN_STEPS, summarise_trace


def run(steps: list[dict[str, object]], messages: list[dict[str, str]] | None = None) -> Submission:
    return Submission.model_validate(
        {
            "id": "r1",
            "task_id": "t1",
            "tool": "aider",
            "model": "gpt-4o",
            "usage": {"total_tokens": 10},
            "trace": {"steps": steps, "messages": messages or []},
        }
    )


def test_no_trace_has_no_summary() -> None:
    bare = Submission.model_validate(
        {"id": "r0", "task_id": "t1", "tool": "a", "model": "m", "usage": {"total_tokens": 1}}
    )
    assert summarise_trace(bare) is None


def test_steps_group_under_agents_in_order_of_appearance_with_edges_counted() -> None:
    steps = [
        {"tool": "search", "agent": "manager"},
        {"tool": "read", "agent": "researcher"},
        {"tool": "search", "agent": "manager"},
        {"tool": "read"},
        {"tool": "search", "agent": "researcher"},
    ]
    handoffs = [{"sender": "manager", "receiver": "researcher", "type": "handoff"}] * 2
    summary = summarise_trace(run(steps, handoffs))
    assert summary is not None
    assert [(g.agent, g.total, [s["index"] for s in g.steps]) for g in summary.agents] == [
        ("manager", 2, [1, 3]),
        ("researcher", 2, [2, 5]),
        (None, 1, [4]),
    ]
    assert summary.tool_edges == [("search", "read", 2), ("read", "search", 2)]
    assert summary.agent_edges == [("manager", "researcher", 2)]
    assert summary.hidden_edges == 0


def test_past_the_shown_steps_an_agent_counts_the_rest() -> None:
    steps = [{"tool": f"t{i % 7}", "agent": "solo"} for i in range(SHOWN_STEPS + 45)]
    summary = summarise_trace(run(steps))
    assert summary is not None
    (solo,) = summary.agents
    assert len(solo.steps) == SHOWN_STEPS and solo.total == SHOWN_STEPS + 45
    assert solo.hidden == 45
    assert summary.steps == SHOWN_STEPS + 45
