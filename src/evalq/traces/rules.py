"""Which task's rule takes a trace that names no task (`evalq.core.trace_rules`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from evalq.core.trace_rules import TraceRule, TraceRuleOf, sampled
from evalq.traces import names
from evalq.traces.tree import SpanTree


class ArrivingSpan(Protocol):
    """What `may_take` reads of a span as it arrives (`evalq.traces.spans_in.IncomingSpan`)."""

    @property
    def trace_id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def attributes(self) -> Mapping[str, object]: ...
    @property
    def resource(self) -> Mapping[str, object]: ...


def matches(rule: TraceRule, tree: SpanTree) -> bool:
    """True when every filter of ``rule`` holds for the trace (sampling aside)."""
    service = tree.root.resource.get(names.SERVICE_NAME)
    if rule.service_name is not None and service != rule.service_name:
        return False
    if rule.span_names and not any(span.name in rule.span_names for span in tree.spans):
        return False
    for key, value in rule.attributes.items():
        found = any(
            _equal(span.attributes.get(key), value) or _equal(span.resource.get(key), value)
            for span in tree.spans
        )
        if not found:
            return False
    return True


def taking_task(rules: Iterable[TraceRuleOf], tree: SpanTree) -> str | None:
    """The first task (by id) whose rule matches and samples the trace, or None."""
    for ruled in sorted(rules, key=lambda r: r.task_id):
        if matches(ruled.rule, tree) and sampled(tree.trace_id, ruled.rule.sample_rate):
            return ruled.task_id
    return None


def _equal(found: object, wanted: object) -> bool:
    """Equal values of one kind: a bool matches only a bool (True is not 1), numbers match
    numbers (2 is 2.0)."""
    if isinstance(found, bool) or isinstance(wanted, bool):
        return found is wanted
    if isinstance(found, int | float) and isinstance(wanted, int | float):
        return found == wanted
    return isinstance(found, str) and found == wanted


def may_take(rules: Iterable[TraceRule], span: ArrivingSpan) -> bool:
    """Could the trace of ``span`` be evaluated because of this span?

    True when the span names its task (``evalq.task_id``, on it or its resource), or when some
    rule samples its trace and has no filter, or a filter this span meets on its own (its
    resource's service, its name, one of the attributes). A trace none of whose spans may be
    taken matches no rule: every rule with a filter needs some span to meet it (`matches`).
    The converse does not hold (a rule's other filters may fail): the sweep still decides.
    """
    if names.EVALQ_TASK_ID in span.attributes or names.EVALQ_TASK_ID in span.resource:
        return True
    for rule in rules:
        if not sampled(span.trace_id, rule.sample_rate):
            continue
        if rule.service_name is None and not rule.span_names and not rule.attributes:
            return True
        if rule.service_name is not None and span.resource.get(names.SERVICE_NAME) == (
            rule.service_name
        ):
            return True
        if span.name in rule.span_names:
            return True
        for key, value in rule.attributes.items():
            if _equal(span.attributes.get(key), value) or _equal(span.resource.get(key), value):
                return True
    return False
