"""Hypothesis strategies shared by the tier-3 graph tests: small traces over tiny alphabets.

Other test_graph_* modules import these; the test below checks the strategies stay valid input.
"""

from __future__ import annotations

from typing import get_args

from hypothesis import given
from hypothesis import strategies as st

from evalq.core.schemas import AgentMessage, MessageType, ToolGraph, Trace, TraceStep

TOOLS = ["plan", "search", "read", "write", "test"]
AGENTS = ["alice", "bob", "carol", "dave"]
CONTEXTS = ["find", "edit", "check"]

steps_st = st.lists(
    st.builds(
        TraceStep,
        tool=st.sampled_from(TOOLS),
        agent=st.none() | st.sampled_from(AGENTS),
        context=st.none() | st.sampled_from(CONTEXTS),
    ),
    max_size=25,
)
messages_st = st.lists(
    st.builds(
        AgentMessage,
        sender=st.sampled_from(AGENTS),
        receiver=st.sampled_from(AGENTS),
        type=st.sampled_from(get_args(MessageType)),
    ),
    max_size=25,
)
reference_st = st.builds(
    ToolGraph,
    edges=st.lists(st.tuples(st.sampled_from(TOOLS), st.sampled_from(TOOLS)), max_size=12),
    start=st.sampled_from(TOOLS),
    end=st.sampled_from(TOOLS),
)
optimal_st = st.dictionaries(st.sampled_from(CONTEXTS), st.sampled_from(TOOLS))


def steps_of(*tools: str) -> list[TraceStep]:
    """Steps calling ``tools`` in order, without agents or contexts."""
    return [TraceStep(tool=tool) for tool in tools]


@given(steps=steps_st, messages=messages_st)
def test_strategies_build_valid_traces(
    steps: list[TraceStep], messages: list[AgentMessage]
) -> None:
    trace = Trace.model_validate({"steps": steps, "messages": messages})
    assert len(trace.steps) == len(steps) <= 25
    assert {s.tool for s in trace.steps} <= set(TOOLS)
