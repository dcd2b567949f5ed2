"""One trace's spans as a tree: its root, each span's kind, and the agent each span ran in.

A span's kind is read from either convention: OpenInference's ``openinference.span.kind``
(LLM, TOOL, AGENT; every other kind is "other") or, when that is absent, the GenAI
``gen_ai.operation.name`` (chat / text_completion / generate_content, execute_tool,
invoke_agent).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from evalq.core.errors import InvalidInput
from evalq.traces import names
from evalq.traces.otlp import Span

SpanKind = Literal["llm", "tool", "agent", "other"]
OPENINFERENCE_KINDS: dict[str, SpanKind] = {
    names.OI_LLM: "llm",
    names.OI_TOOL: "tool",
    names.OI_AGENT: "agent",
}


def kind_of(span: Span) -> SpanKind:
    """What the span records, by whichever convention it follows."""
    return kind_of_attributes(span.attributes)


def kind_of_attributes(attributes: Mapping[str, Any]) -> SpanKind:
    """`kind_of` from a span's own attributes (all it reads: a span's kind is known alone)."""
    openinference = attributes.get(names.OI_SPAN_KIND)
    if isinstance(openinference, str):
        return OPENINFERENCE_KINDS.get(openinference.upper(), "other")
    operation = attributes.get(names.GEN_AI_OPERATION_NAME)
    if operation in names.GEN_AI_LLM_OPERATIONS:
        return "llm"
    if operation == names.GEN_AI_TOOL_OPERATION:
        return "tool"
    if operation == names.GEN_AI_AGENT_OPERATION:
        return "agent"
    return "other"


def is_openinference(span: Span) -> bool:
    """True when the span follows OpenInference (errors then name its attributes)."""
    return names.OI_SPAN_KIND in span.attributes


@dataclass
class SpanTree:
    """The spans of one trace in start order, with parent links checked.

    Attributes:
        spans: every span, ordered by start time (then span id, for a stable order).
        root: the one span without a parent.
    """

    trace_id: str
    spans: list[Span]
    root: Span
    by_id: dict[str, Span] = field(default_factory=dict)
    _agent_memo: dict[str, Span | None] = field(default_factory=dict)

    def of_kind(self, kind: SpanKind) -> list[Span]:
        """The spans of ``kind``, in start order."""
        return [span for span in self.spans if kind_of(span) == kind]

    def parent(self, span: Span) -> Span | None:
        """The span's parent (None for the root)."""
        return None if span.parent_id is None else self.by_id[span.parent_id]

    def enclosing_agent(self, span: Span) -> Span | None:
        """The nearest proper ancestor of kind agent (the agent the span ran in), or None."""
        parent = self.parent(span)
        return None if parent is None else self._agent_context(parent)

    def _agent_context(self, span: Span) -> Span | None:
        """``span`` itself if it is an agent span, else its nearest agent ancestor.

        Walks up iteratively (a trace may be deep) and remembers every span it passes.
        """
        path: list[Span] = []
        current: Span | None = span
        while current is not None and current.span_id not in self._agent_memo:
            if kind_of(current) == "agent":
                self._agent_memo[current.span_id] = current
                break
            path.append(current)
            current = self.parent(current)
        found = None if current is None else self._agent_memo[current.span_id]
        for visited in path:
            self._agent_memo[visited.span_id] = found
        return found

    def seconds(self, time_ns: int) -> float:
        """``time_ns`` in seconds from the root span's start (never negative)."""
        return max(0, time_ns - self.root.start_ns) / 1e9

    def first(self, key: str) -> tuple[Any, str] | None:
        """The value of attribute ``key`` and where it was found, or None.

        Looked up on the root span, then on every other span in start order, then on the
        resource: the first found wins.
        """
        root_first = [self.root, *(s for s in self.spans if s is not self.root)]
        for span in root_first:
            if key in span.attributes:
                return span.attributes[key], f"{span.label}.{key}"
        for span in root_first:
            if key in span.resource:
                return span.resource[key], f"{span.label}.resource.{key}"
        return None


def trees_of(spans: Iterable[Span]) -> list[SpanTree]:
    """The spans grouped by trace (in order of each trace's first span), each checked whole.

    A trace must be complete in one request: one root span, every parent present, no loops,
    no span id twice. Otherwise `InvalidInput` names the span and the rule.
    """
    grouped: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        grouped[span.trace_id].append(span)
    if not grouped:
        raise InvalidInput([("(body)", "holds no spans")])
    return [_tree(trace_id, items) for trace_id, items in grouped.items()]


def _tree(trace_id: str, spans: list[Span]) -> SpanTree:
    by_id: dict[str, Span] = {}
    for span in spans:
        if span.span_id in by_id:
            raise InvalidInput([(f"{span.label}.spanId", "appears twice in the trace")])
        by_id[span.span_id] = span
    roots = [span for span in spans if span.parent_id is None]
    where = f"trace {trace_id}"
    if not roots:
        rule = "has no root span (one without a parent): send a trace's spans in one request"
        raise InvalidInput([(where, rule)])
    if len(roots) > 1:
        rule = f"has {len(roots)} root spans; one trace has one root"
        raise InvalidInput([(f"{roots[1].label}.parentSpanId", rule)])
    for span in spans:
        if span.parent_id is not None and span.parent_id not in by_id:
            rule = f"parent {span.parent_id} is not in the trace: send its spans in one request"
            raise InvalidInput([(f"{span.label}.parentSpanId", rule)])
    _check_no_loops(spans, by_id)
    ordered = sorted(spans, key=lambda s: (s.start_ns, s.span_id))
    return SpanTree(trace_id, ordered, roots[0], by_id)


def _check_no_loops(spans: list[Span], by_id: dict[str, Span]) -> None:
    """Every span reaches the root by its parents (each span is walked once overall)."""
    reaches_root: set[str] = set()
    for span in spans:
        path: list[str] = []
        seen: set[str] = set()
        current: Span | None = span
        while current is not None and current.span_id not in reaches_root:
            if current.span_id in seen:
                raise InvalidInput([(f"{span.label}.parentSpanId", "its parents form a loop")])
            seen.add(current.span_id)
            path.append(current.span_id)
            current = None if current.parent_id is None else by_id[current.parent_id]
        reaches_root.update(path)
