"""Communication overhead: coordination-type messages / all messages."""

from __future__ import annotations

from hypothesis import given
from tests.unit.metrics.test_graph_strategies import messages_st

from evalq.core.schemas import AgentMessage, MessageType
from evalq.metrics.graph import COORDINATION_TYPES, PRODUCTIVE_TYPES, communication_overhead


def message(kind: MessageType) -> AgentMessage:
    return AgentMessage(sender="a", receiver="b", type=kind)


def test_hand_computed() -> None:
    kinds: list[MessageType] = [
        "coordination",
        "status_update",
        "handoff",
        "task_request",
        "result_delivery",
    ]
    # 3 coordination-type messages of 5
    assert communication_overhead([message(k) for k in kinds]) == 0.6


def test_only_productive_messages_is_zero_not_none() -> None:
    assert communication_overhead([message("data_transfer"), message("task_request")]) == 0.0


def test_no_messages_is_not_applicable() -> None:
    assert communication_overhead([]) is None


def test_the_two_type_sets_partition_every_message_type() -> None:
    assert {"coordination", "status_update", "handoff"} == COORDINATION_TYPES
    assert not COORDINATION_TYPES & PRODUCTIVE_TYPES
    assert len(COORDINATION_TYPES | PRODUCTIVE_TYPES) == 6


@given(messages=messages_st)
def test_range(messages: list[AgentMessage]) -> None:
    value = communication_overhead(messages)
    assert (value is None) == (not messages)
    assert value is None or 0.0 <= value <= 1.0


@given(messages=messages_st)
def test_a_productive_message_never_raises_overhead(messages: list[AgentMessage]) -> None:
    before = communication_overhead(messages)
    after = communication_overhead([*messages, message("result_delivery")])
    assert after is not None
    assert before is None or after <= before
