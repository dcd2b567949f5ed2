"""graph_metrics: every tier-3 metric of one submission, its None cases and its speed."""

from __future__ import annotations

import json
import math
import random

import pytest
from hypothesis import given
from pydantic import ValidationError
from tests.unit.metrics.test_graph_strategies import (
    messages_st,
    optimal_st,
    reference_st,
    steps_st,
)

from evalq.core.results import GraphResult
from evalq.core.schemas import (
    MAX_TRACE_EDGES,
    MAX_TRACE_NODES,
    AgentMessage,
    Task,
    ToolGraph,
    Trace,
    TraceStep,
)
from evalq.metrics.graph import graph_metrics, summarise_trace

# Reference: A -> B -> C -> D plus the shortcut A -> C; shortest A -> C -> D = 2 edges.
TASK = Task(
    id="review-1",
    category="data_analysis",
    reference_tool_graph=ToolGraph(
        edges=[("A", "B"), ("B", "C"), ("C", "D"), ("A", "C")], start="A", end="D"
    ),
    optimal_tools={"pick": "C"},
)


def test_hand_computed_run() -> None:
    trace = Trace(
        steps=[
            TraceStep(tool="A", agent="alice"),
            TraceStep(tool="B", agent="alice", context="pick"),  # wrong tool
            TraceStep(tool="C", agent="bob", context="pick"),  # right tool
            TraceStep(tool="D", agent="bob"),
        ],
        messages=[
            AgentMessage(sender="alice", receiver="bob", type="task_request"),
            AgentMessage(sender="bob", receiver="alice", type="status_update"),
            AgentMessage(sender="bob", receiver="alice", type="result_delivery"),
            AgentMessage(sender="alice", receiver="bob", type="coordination"),
        ],
    )
    metrics = graph_metrics(trace, TASK)
    # A..D in 3 transitions: 2 / 3.  Right tool at 1 of 2 judged steps: 1 / 2.
    assert metrics.path_convergence == pytest.approx(2 / 3)
    assert metrics.tool_selection_accuracy == 0.5
    assert metrics.tool_efficiency == pytest.approx((2 / 3 + 1 / 2) / 2)
    # status_update + coordination of 4 messages; 2 steps each
    assert metrics.communication_overhead == 0.5
    assert metrics.task_distribution_balance == 1.0
    assert metrics.coordination_quality == pytest.approx((1 - 0.5 + 1.0) / 2)
    # alice <-> bob: degree 2/2, betweenness 0, closeness 1 each: (0 + 1 + 1) / 3
    assert dict(metrics.coordination_centrality) == pytest.approx({"alice": 2 / 3, "bob": 2 / 3})
    assert metrics.central_agent == "alice"  # tie: first name
    assert metrics.max_coordination_centrality == pytest.approx(2 / 3)


def test_docs_worked_example() -> None:
    # docs/trace-format.md and docs/scoring/tier3.md, "Worked example"
    trace = Trace.model_validate(
        {
            "steps": [
                {"tool": "search_papers", "agent": "manager", "context": "find_related_work"},
                {"tool": "read_pdf", "agent": "researcher", "context": "read_paper"},
                {"tool": "summarise", "agent": "researcher"},
                {"tool": "write_review", "agent": "synthesiser", "context": "draft_review"},
            ],
            "messages": [
                {"sender": "manager", "receiver": "researcher", "type": "task_request"},
                {"sender": "researcher", "receiver": "manager", "type": "status_update"},
                {"sender": "researcher", "receiver": "synthesiser", "type": "handoff"},
                {"sender": "synthesiser", "receiver": "manager", "type": "result_delivery"},
            ],
        }
    )
    task = Task.model_validate(
        {
            "id": "paper-42",
            "category": "data_analysis",
            "reference_tool_graph": {
                "edges": [
                    ["search_papers", "read_pdf"],
                    ["read_pdf", "summarise"],
                    ["summarise", "write_review"],
                    ["read_pdf", "write_review"],
                ],
                "start": "search_papers",
                "end": "write_review",
            },
            "optimal_tools": {
                "find_related_work": "search_papers",
                "read_paper": "read_pdf",
                "draft_review": "write_review",
            },
        }
    )
    metrics = graph_metrics(trace, task)
    balance = 1 - math.sqrt(1 / 3) / (4 / 3)  # counts 1, 2, 1
    assert metrics.path_convergence == pytest.approx(2 / 3)
    assert metrics.tool_selection_accuracy == 1.0
    assert metrics.tool_efficiency == pytest.approx((2 / 3 + 1) / 2)
    assert metrics.communication_overhead == 0.5
    assert metrics.task_distribution_balance == pytest.approx(balance)
    assert metrics.coordination_quality == pytest.approx((0.5 + balance) / 2)
    # manager <-> researcher -> synthesiser -> manager, n = 3
    # manager:     betweenness 1/2, closeness 1,   degree 3/4
    # researcher:  betweenness 1/2, closeness 2/3, degree 3/4
    # synthesiser: betweenness 0,   closeness 2/3, degree 2/4
    assert dict(metrics.coordination_centrality) == pytest.approx(
        {
            "manager": (1 / 2 + 1 + 3 / 4) / 3,
            "researcher": (1 / 2 + 2 / 3 + 3 / 4) / 3,
            "synthesiser": (0 + 2 / 3 + 2 / 4) / 3,
        }
    )
    assert metrics.central_agent == "manager"


def test_weights_are_parameters() -> None:
    trace = Trace(steps=[TraceStep(tool="A"), TraceStep(tool="B", context="pick")])
    # path: A never reaches D -> 0.0; accuracy 0 of 1 -> 0.0; accuracy weighed alone -> 0.0
    weights = {"path_convergence": 0.0, "tool_selection_accuracy": 1.0}
    metrics = graph_metrics(trace, TASK, tool_efficiency_weights=weights)
    assert metrics.path_convergence == 0.0
    assert metrics.tool_efficiency == 0.0


def test_no_trace_is_all_not_applicable() -> None:
    metrics = graph_metrics(None, TASK)
    assert metrics == GraphResult()
    values = metrics.model_dump()
    assert values.pop("coordination_centrality") == {}
    assert set(values.values()) == {None}


def test_single_agent_run_without_task_references() -> None:
    trace = Trace(steps=[TraceStep(tool="A", agent="solo"), TraceStep(tool="B", agent="solo")])
    metrics = graph_metrics(trace, Task(id="t", category="debugging"))
    assert metrics.task_distribution_balance == 1.0  # spec: single agent is balanced
    assert metrics.coordination_quality is None  # nothing to coordinate
    assert metrics.path_convergence is None
    assert metrics.tool_selection_accuracy is None
    assert metrics.tool_efficiency is None
    assert metrics.communication_overhead is None
    assert metrics.coordination_centrality == {}


def test_the_stored_form_is_json_and_the_result_frozen() -> None:
    trace = Trace(
        steps=[TraceStep(tool="A", agent="x"), TraceStep(tool="D", agent="y")],
        messages=[AgentMessage(sender="y", receiver="x", type="handoff")],
    )
    metrics = graph_metrics(trace, TASK)
    stored = metrics.model_dump(mode="json")
    assert json.loads(json.dumps(stored)) == stored
    assert GraphResult.model_validate(stored) == metrics
    assert list(stored["coordination_centrality"]) == ["x", "y"]
    with pytest.raises(ValidationError):
        metrics.path_convergence = 1.0  # type: ignore[misc]


@given(steps=steps_st, messages=messages_st, reference=reference_st, optimal=optimal_st)
def test_every_metric_in_unit_interval_or_none(
    steps: list[TraceStep],
    messages: list[AgentMessage],
    reference: ToolGraph,
    optimal: dict[str, str],
) -> None:
    task = Task(id="t", category="debugging", reference_tool_graph=reference, optimal_tools=optimal)
    values = graph_metrics(Trace(steps=steps, messages=messages), task).model_dump()
    centrality = values.pop("coordination_centrality")
    agent = values.pop("central_agent")
    assert (agent is None) == (not centrality)
    for value in [*values.values(), *centrality.values()]:
        assert value is None or 0.0 <= value <= 1.0 + 1e-12


def limit_trace() -> Trace:
    """990 agents and 10 tools (1000 nodes); 1000 transitions and 4000 messages (5000 edges)."""
    rng = random.Random(0)
    agents = [f"agent-{i}" for i in range(990)]
    tools = [f"tool-{i}" for i in range(10)]
    steps = [
        TraceStep(tool=rng.choice(tools), agent=rng.choice(agents), context=rng.choice(tools))
        for _ in range(1001)
    ]
    messages = [
        AgentMessage(sender=rng.choice(agents), receiver=rng.choice(agents), type="coordination")
        for _ in range(4000)
    ]
    return Trace(steps=steps, messages=messages)


def test_a_trace_at_the_limits_computes() -> None:
    # Its speed (about 0.35 s here) is a benchmark figure, not an assertion: machines are noisy.
    trace = limit_trace()
    nodes = {s.tool for s in trace.steps} | {s.agent for s in trace.steps}
    nodes |= {m.sender for m in trace.messages} | {m.receiver for m in trace.messages}
    assert len(nodes) == MAX_TRACE_NODES
    assert len(trace.steps) - 1 + len(trace.messages) == MAX_TRACE_EDGES
    task = TASK.model_copy(
        update={
            "reference_tool_graph": ToolGraph(
                edges=[(f"tool-{i}", f"tool-{i + 1}") for i in range(9)],
                start="tool-0",
                end="tool-9",
            ),
            "optimal_tools": {f"tool-{i}": f"tool-{i}" for i in range(10)},
        }
    )
    metrics = graph_metrics(trace, task)
    summary = summarise_trace(trace)
    assert len(metrics.coordination_centrality) == 990
    assert metrics.path_convergence is not None and metrics.coordination_quality is not None
    assert len(summary) <= 4000
