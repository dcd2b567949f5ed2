"""JSON written by the client into span attributes: parsed within bounds, never past them."""

from __future__ import annotations

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from evalq.core.errors import InvalidInput
from evalq.core.storable import DEPTH_RULE, SIZE_RULE
from evalq.traces import TraceDefaults, submissions_from_otlp
from evalq.traces.json_attributes import MAX_ATTRIBUTE_JSON_CHARS, attribute_json
from evalq.traces.output import message_text
from evalq.traces.steps import call_arguments
from tests.support.otel_runs import two_agent_run

DEEP = "[" * 3000 + "]" * 3000
"""Deeper than the parser's own recursion limit: json.loads raises RecursionError on it."""
AT = "span 00000000000000aa (tool).gen_ai.tool.call.arguments"


def test_the_bounds_are_refusals_naming_the_field() -> None:
    with pytest.raises(InvalidInput) as deep:
        attribute_json(DEEP, AT)
    assert deep.value.problems == [(AT, DEPTH_RULE)]
    with pytest.raises(InvalidInput) as nested:
        attribute_json("[" * 33 + "]" * 33, AT)  # within the parser's limit, past the store's
    assert nested.value.problems == [(AT, DEPTH_RULE)]
    long = '"' + "x" * MAX_ATTRIBUTE_JSON_CHARS + '"'
    with pytest.raises(InvalidInput) as large:
        attribute_json(long, AT)
    [(field, rule)] = large.value.problems
    assert field == AT and rule.startswith(SIZE_RULE) and "at most 1,048,576" in rule
    assert attribute_json('{"path": "a.py"}', AT) == {"path": "a.py"}


def test_call_arguments_past_the_bounds_are_refused_other_shapes_left_out() -> None:
    with pytest.raises(InvalidInput) as deep:
        call_arguments('{"a": ' + DEEP + "}", AT)
    assert deep.value.problems == [(AT, DEPTH_RULE)]
    assert call_arguments("not json", AT) is None  # an unusual value, not a hostile one
    assert call_arguments("[1, 2]", AT) is None
    assert call_arguments('{"a": 1, "b": [1], "c": "x"}', AT) == {"a": 1, "c": "x"}


def test_output_messages_past_the_bounds_name_the_bound() -> None:
    label = "span 00000000000000bb (agent).gen_ai.output.messages"
    with pytest.raises(InvalidInput) as deep:
        message_text(DEEP, label)
    assert deep.value.problems == [(label, DEPTH_RULE)]
    with pytest.raises(InvalidInput) as bad:
        message_text("not json", label)
    assert bad.value.problems[0][1].startswith("must be a list of messages")


@pytest.mark.parametrize("attribute", ["gen_ai.output.messages", "gen_ai.tool.call.arguments"])
def test_a_poisoned_trace_is_an_invalid_input_not_a_recursion_error(attribute: str) -> None:
    request = encode_spans(two_agent_run())
    spans = request.resource_spans[0].scope_spans[0].spans
    target = next(
        s
        for s in spans
        if (attribute == "gen_ai.output.messages" and s.name == "invoke_agent researcher")
        or (attribute == "gen_ai.tool.call.arguments" and s.name == "execute_tool read")
    )
    poisoned = target.attributes.add(key=attribute)
    poisoned.value.string_value = DEEP
    with pytest.raises(InvalidInput) as refused:
        submissions_from_otlp(request, TraceDefaults())
    [(field, rule)] = refused.value.problems
    assert field == f"span {target.span_id.hex()} ({target.name}).{attribute}"
    assert rule == DEPTH_RULE
