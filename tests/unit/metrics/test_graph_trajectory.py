"""Trajectory match on hand-made traces (each mode, arguments, loops) and on a trace the real
OpenTelemetry SDK recorded and the OTLP exporter's encoder encoded (search -> read -> write)."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from tests.support.otel_runs import Run, as_protobuf, two_agent_run

from evalq.core.trajectory import ToolCall, TrajectoryMode
from evalq.metrics.graph.trajectory import find_loops, trajectory_match
from evalq.traces import parse_protobuf, submissions_from_otlp


def calls(*names: str | tuple[str, dict[str, Any]]) -> list[ToolCall]:
    return [
        ToolCall(tool=n) if isinstance(n, str) else ToolCall(tool=n[0], arguments=n[1])
        for n in names
    ]


PLAN = calls("search", "read", "write")
MISSED = ["read", "write"]


@pytest.mark.parametrize(
    ("made", "mode", "passed", "score", "missing", "unexpected"),
    [
        # exact: the same calls in the same order, nothing else
        (calls("search", "read", "write"), "exact", True, 1.0, [], []),
        (
            calls("search", "write", "read"),
            "exact",
            False,
            1 / 3,
            ["read", "write"],
            ["write", "read"],
        ),
        (calls("search", "read", "write", "write"), "exact", False, 3 / 4, [], ["write"]),
        # in order: others may come between, order kept
        (calls("search", "lint", "read", "write"), "in_order", True, 1.0, [], ["lint"]),
        (calls("read", "search", "write"), "in_order", False, 2 / 3, ["read"], ["read"]),
        # any order: the same calls, nothing else
        (calls("write", "search", "read"), "any_order", True, 1.0, [], []),
        (calls("write", "search", "read", "lint"), "any_order", False, 3 / 4, [], ["lint"]),
        (calls("write", "search"), "any_order", False, 2 / 3, ["read"], []),
        # subset: nothing unexpected, skipping allowed
        (calls("search", "write"), "subset", True, 1.0, ["read"], []),
        (calls("search", "lint"), "subset", False, 1 / 2, ["read", "write"], ["lint"]),
        (calls(), "subset", True, 1.0, ["search", "read", "write"], []),
        (calls(), "in_order", False, 0.0, ["search", "read", "write"], []),
    ],
)
def test_each_mode_on_hand_made_traces(
    made: list[ToolCall],
    mode: TrajectoryMode,
    passed: bool,
    score: float,
    missing: list[str],
    unexpected: list[str],
) -> None:
    found = trajectory_match(made, PLAN, mode)
    assert (found.passed, found.missing, found.unexpected) == (passed, missing, unexpected)
    assert found.score == pytest.approx(score)
    assert len(found.matched) + len(found.missing) == len(PLAN)


def test_in_order_finds_the_longest_match_not_the_first() -> None:
    # a greedy scan pairs the first "read" with the plan's and then cannot place "search"
    plan = calls("search", "read")
    found = trajectory_match(calls("read", "search", "read"), plan, "in_order")
    assert found.passed and found.unexpected == ["read"]


def test_arguments_must_match_where_the_plan_names_them() -> None:
    plan = calls(("search", {"query": "sparse attention"}), "read")
    right = calls(("search", {"query": "sparse attention", "limit": 5}), "read")
    wrong = calls(("search", {"query": "dense"}), "read")
    assert trajectory_match(right, plan, "exact").passed
    found = trajectory_match(wrong, plan, "exact")
    assert not found.passed and found.missing == ["search(query='sparse attention')"]
    assert found.unexpected == ["search(query='dense')"]
    # any order pairs the specific expectation first, whatever the order of the calls
    plan = calls("search", ("search", {"query": "a"}))
    assert trajectory_match(calls(("search", {"query": "a"}), "search"), plan, "any_order").passed


def test_loops_are_repeated_call_cycles() -> None:
    (loop,) = find_loops(calls("plan", "search", "read", "search", "read", "search", "read"))
    assert (loop.cycle, loop.repeats, loop.start) == (["search", "read"], 3, 1)
    (loop,) = find_loops(calls("search", "search", "search", "search", "write"))
    assert (loop.cycle, loop.repeats) == (["search"], 4)
    assert find_loops(calls("search", "read", "search", "read", "write")) == []  # twice: not a loop
    found = trajectory_match(calls("search", "read", "read", "read", "write"), PLAN, "in_order")
    assert found.passed and [loop.cycle for loop in found.loops] == [["read"]]


def test_a_trace_from_the_opentelemetry_sdk_exporter() -> None:
    (imported,) = submissions_from_otlp(parse_protobuf(as_protobuf(two_agent_run())))
    trace = imported.submission.trace
    assert trace is not None
    made = [ToolCall(tool=step.tool) for step in trace.steps]
    assert [c.tool for c in made] == ["search", "read", "write"]
    expected: dict[TrajectoryMode, tuple[list[ToolCall], bool]] = {
        "exact": (PLAN, True),
        "in_order": (calls("search", "write"), True),
        "any_order": (calls("write", "read", "search"), True),
        "subset": (calls("search", "read", "write", "summarise"), True),
    }
    for mode, (plan, passed) in expected.items():
        found = trajectory_match(made, plan, mode)
        assert found.passed is passed and found.loops == [], mode
    found = trajectory_match(made, calls("search", "summarise"), "in_order")
    assert not found.passed and found.missing == ["summarise"] and found.score == 0.5


def test_the_graph_tier_scores_a_task_that_names_its_calls_and_weighs_it_where_told() -> None:
    from evalq.core.schemas import Task, Trace
    from evalq.metrics.graph import graph_metrics

    trace = Trace.model_validate(
        {
            "steps": [
                {"tool": "search", "arguments": {"query": "sparse attention"}},
                {"tool": "read"},
                {"tool": "lint"},
            ]
        }
    )
    plain = Task(id="t", optimal_tools={})
    assert graph_metrics(trace, plain).trajectory is None
    assert "expected_tool_calls" not in plain.model_dump(mode="json")  # hashes as before
    task = Task.model_validate(
        {
            "id": "t",
            "expected_tool_calls": [
                {"tool": "search", "arguments": {"query": "sparse attention"}},
                {"tool": "read"},
            ],
            "trajectory_mode": "subset",
        }
    )
    found = graph_metrics(trace, task)
    assert found.trajectory is not None and found.trajectory.mode == "subset"
    assert found.trajectory.unexpected == ["lint"] and found.trajectory.score == pytest.approx(
        2 / 3
    )
    # no reference graph, no optimal tools: tool efficiency is the trajectory's score only
    # where the profile weighs it
    assert found.tool_efficiency is None
    weighed = graph_metrics(trace, task, tool_efficiency_weights={"trajectory_match": 1.0})
    assert weighed.tool_efficiency == pytest.approx(2 / 3)


def test_arguments_recorded_on_opentelemetry_tool_spans_are_matched() -> None:
    """GenAI tool spans with ``gen_ai.tool.call.arguments`` (a JSON object), recorded by the
    SDK: scalars are kept, the rest left out, and the plan's arguments are checked."""
    exporter = InMemorySpanExporter()
    resource = {"evalq.task_id": "t", "evalq.tool": "agent"}
    provider = TracerProvider(resource=Resource.create(resource))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    run = Run(provider.get_tracer("evalq-tests"), "genai", frozenset())
    arguments = ('{"query": "sparse attention", "limit": 5, "filters": {"year": 2024}}', "[1]")
    with run.span("workflow", {}, 0, 4), run.agent("researcher", 0, 4):
        run.llm(0, 1, 100, 20, 0.001)
        for n, given in enumerate(arguments, start=1):
            attributes = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "search",
                "gen_ai.tool.call.arguments": given,
            }
            with run.span("execute_tool search", attributes, n, n + 1):
                pass
    provider.shutdown()
    spans = list(exporter.get_finished_spans())
    (imported,) = submissions_from_otlp(parse_protobuf(as_protobuf(spans)))
    trace = imported.submission.trace
    assert trace is not None
    first, second = trace.steps
    assert first.arguments == {"query": "sparse attention", "limit": 5}
    assert second.arguments is None  # not a JSON object
    made = [ToolCall(tool=s.tool, arguments=s.arguments) for s in trace.steps]
    plan = calls(("search", {"query": "sparse attention"}), ("search", {"query": "dense"}))
    found = trajectory_match(made, plan, "exact")
    assert found.matched == ["search(query='sparse attention')"]
    assert found.missing == ["search(query='dense')"] and found.unexpected == ["search"]
