"""The execution trace (docs/trace-format.md) from the spans: tool steps and agent messages.

Agents talk in two shapes. An agent span inside another agent's span is a delegation: a
``task_request`` from the outer agent when it starts and a ``result_delivery`` back when it
ends. Agent spans side by side (the same enclosing agent, or none) that follow one another
with a change of agent are a ``handoff``, as when one agent transfers the conversation.
"""

from __future__ import annotations

import math
from collections import defaultdict
from itertools import pairwise
from typing import Any

from evalq.core.errors import InvalidInput
from evalq.traces import names
from evalq.traces.json_attributes import attribute_json, over_bounds
from evalq.traces.otlp import Span
from evalq.traces.tree import SpanTree, is_openinference

Provenance = dict[str, str]


def trace_of(tree: SpanTree, where: Provenance) -> dict[str, Any]:
    """The submission's ``trace`` object; records in ``where`` which span made each step."""
    steps = []
    for index, span in enumerate(tree.of_kind("tool")):
        steps.append(step_of(tree, span, where, f"trace.steps.{index}"))
    return {"steps": steps, "messages": messages_of(tree, where)}


def step_of(tree: SpanTree, span: Span, where: Provenance, at: str) -> dict[str, Any]:
    """One tool span as a step: tool, agent, context, seconds from the trace's start."""
    tool_key = _present(span, names.GEN_AI_TOOL_NAME, names.OI_TOOL_NAME)
    step: dict[str, Any] = {
        "tool": text_attribute(span, names.GEN_AI_TOOL_NAME, names.OI_TOOL_NAME),
        "started_at": tree.seconds(span.start_ns),
        "ended_at": tree.seconds(span.end_ns),
    }
    where[at] = span.label
    where[f"{at}.tool"] = f"{span.label}.{tool_key}"
    agent = tree.enclosing_agent(span)
    if agent is not None:
        step["agent"] = agent_name(agent)
        where[f"{at}.agent"] = f"{agent.label} (agent name)"
    if names.EVALQ_CONTEXT in span.attributes:
        step["context"] = span.attributes[names.EVALQ_CONTEXT]
        where[f"{at}.context"] = f"{span.label}.{names.EVALQ_CONTEXT}"
    arguments_at = f"{span.label}.{names.GEN_AI_TOOL_ARGUMENTS}"
    arguments = call_arguments(span.attributes.get(names.GEN_AI_TOOL_ARGUMENTS), arguments_at)
    if arguments:
        step["arguments"] = arguments
        where[f"{at}.arguments"] = arguments_at
    return step


MAX_ARGUMENTS = 50
"""Arguments of one call kept for the trajectory match (a step holds at most this many)."""


def call_arguments(value: Any, where: str) -> dict[str, Any] | None:
    """A tool call's scalar arguments from ``gen_ai.tool.call.arguments`` (a JSON object, as
    the GenAI conventions record it; opt-in in most instrumentations). What is not a JSON
    object, and arguments that are not scalars, are left out: the trajectory match compares
    scalars. JSON text past the parser's bounds (`attribute_json`) is refused, naming
    ``where``: a hostile value, not an unusual one."""
    if isinstance(value, str):
        try:
            value = attribute_json(value, where)
        except InvalidInput as error:
            if over_bounds(error):
                raise
            return None
    if not isinstance(value, dict):
        return None
    kept = {
        str(key)[:200]: item
        for key, item in value.items()
        if item is None
        or isinstance(item, str | bool | int)
        or (isinstance(item, float) and math.isfinite(item))
    }
    return dict(list(kept.items())[:MAX_ARGUMENTS]) or None


def agent_name(span: Span) -> str:
    """``gen_ai.agent.name`` or ``agent.name``; an OpenInference agent span may go without,
    its instrumentations name the span after the agent."""
    if is_openinference(span) and not _has(span, names.GEN_AI_AGENT_NAME, names.OI_AGENT_NAME):
        return span.name
    return text_attribute(span, names.GEN_AI_AGENT_NAME, names.OI_AGENT_NAME)


def messages_of(tree: SpanTree, where: Provenance) -> list[dict[str, str]]:
    """Delegations and handoffs between agent spans, ordered by when they happened."""
    timed: list[tuple[int, int, dict[str, str], str]] = []
    side_by_side: dict[str | None, list[Span]] = defaultdict(list)
    for span in tree.of_kind("agent"):
        outer = tree.enclosing_agent(span)
        side_by_side[None if outer is None else outer.span_id].append(span)
        if outer is not None and agent_name(outer) != agent_name(span):
            sender, receiver = agent_name(outer), agent_name(span)
            timed.append(
                (span.start_ns, len(timed), message(sender, receiver, "task_request"), span.label)
            )
            timed.append(
                (span.end_ns, len(timed), message(receiver, sender, "result_delivery"), span.label)
            )
    for spans in side_by_side.values():
        for before, after in pairwise(spans):
            if agent_name(before) != agent_name(after):
                handoff = message(agent_name(before), agent_name(after), "handoff")
                timed.append((after.start_ns, len(timed), handoff, after.label))
    timed.sort(key=lambda item: (item[0], item[1]))
    for index, (_, _, _, label) in enumerate(timed):
        where[f"trace.messages.{index}"] = label
    return [item[2] for item in timed]


def message(sender: str, receiver: str, kind: str) -> dict[str, str]:
    """One agent message of the trace format."""
    return {"sender": sender, "receiver": receiver, "type": kind}


def text_attribute(span: Span, *keys: str) -> str:
    """The first of ``keys`` the span carries, as a string; `InvalidInput` naming the first key
    when it carries none."""
    for key in keys:
        if key in span.attributes:
            value = span.attributes[key]
            if not isinstance(value, str):
                raise InvalidInput([(f"{span.label}.{key}", "must be a string")])
            return value
    preferred = keys[1] if is_openinference(span) and len(keys) > 1 else keys[0]
    kind = "tool" if names.GEN_AI_TOOL_NAME in keys else "agent"
    rule = f"missing: a {kind} span names its {kind} ({' or '.join(keys)})"
    raise InvalidInput([(f"{span.label}.{preferred}", rule)])


def _has(span: Span, *keys: str) -> bool:
    return any(key in span.attributes for key in keys)


def _present(span: Span, *keys: str) -> str:
    """The first of ``keys`` the span carries (the first key when it carries none)."""
    return next((key for key in keys if key in span.attributes), keys[0])
