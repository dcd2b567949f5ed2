"""The run's final output: what the root agent span says it answered.

The root agent is the outermost agent span that ended last (the agent that finished the run);
with no agent span, the trace's root span. Its output is the first found of ``evalq.output``,
OpenInference's ``output.value`` and the text parts of the last of GenAI's
``gen_ai.output.messages``, on the span itself and then on its events (latest first); then the
same on the trace's root span, then on the LLM span that ended last (GenAI instrumentations
often record the output messages on the model call only). None found: an empty output.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalq.core.errors import InvalidInput
from evalq.traces import names
from evalq.traces.json_attributes import attribute_json, over_bounds
from evalq.traces.otlp import Span
from evalq.traces.tree import SpanTree

OUTPUT_KEYS = (names.EVALQ_OUTPUT, names.OI_OUTPUT_VALUE, names.GEN_AI_OUTPUT_MESSAGES)


def root_agent(tree: SpanTree) -> Span:
    """The outermost agent span that ended last, or the trace's root span."""
    outermost = [s for s in tree.of_kind("agent") if tree.enclosing_agent(s) is None]
    return max(outermost, key=lambda s: s.end_ns) if outermost else tree.root


def output_of(tree: SpanTree, where: dict[str, str]) -> str:
    """The final output text ("" when no span carries one)."""
    llm_spans = sorted(tree.of_kind("llm"), key=lambda s: s.end_ns)
    for span in dict.fromkeys([root_agent(tree), tree.root, *llm_spans[-1:]]):
        for attributes in [span.attributes, *(e.attributes for e in reversed(span.events))]:
            found = _output_in(attributes, span)
            if found is not None:
                where["output"] = found[1]
                return found[0]
    return ""


def _output_in(attributes: Mapping[str, Any], span: Span) -> tuple[str, str] | None:
    for key in OUTPUT_KEYS:
        if key not in attributes:
            continue
        label = f"{span.label}.{key}"
        value = attributes[key]
        if key == names.GEN_AI_OUTPUT_MESSAGES:
            return message_text(value, label), label
        if not isinstance(value, str):
            raise InvalidInput([(label, "must be a string")])
        return value, label
    return None


def message_text(value: Any, label: str) -> str:
    """The text parts of the last message of ``gen_ai.output.messages``, one per line.

    The convention gives it as JSON text (``[{"role": ..., "parts": [{"type": "text",
    "content": ...}]}]``) or as a structured value; both are read.
    """
    rule = "must be a list of messages with parts (the GenAI output-messages JSON)"
    if isinstance(value, str):
        try:
            value = attribute_json(value, label)
        except InvalidInput as error:
            if over_bounds(error):
                raise
            raise InvalidInput([(label, rule)]) from None
    if not isinstance(value, list) or not value or not isinstance(value[-1], dict):
        raise InvalidInput([(label, rule)])
    parts = value[-1].get("parts")
    if not isinstance(parts, list):
        raise InvalidInput([(label, rule)])
    texts = [
        p["content"]
        for p in parts
        if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("content"), str)
    ]
    return "\n".join(texts)
