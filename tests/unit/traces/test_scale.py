"""Scale: a trace with tens of thousands of LLM spans converts in time linear in its spans,
and a request's traces are counted without converting them.

Each LLM span is a `CountingSpan`: it counts the equality comparisons made on it, which is how
searching a list for a span shows (``span in priced_spans`` compares it with each one). The
conversion needs none; a budget of one per span fails the search at once instead of letting it
run for minutes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from evalq.core.errors import InvalidInput
from evalq.traces import TraceDefaults, count_traces, parse_json
from evalq.traces.convert import imported
from evalq.traces.otlp import Span
from evalq.traces.tree import trees_of

SPANS = 30_000
COST = 0.001
TRACE_ID = "ab" * 16


@dataclass(frozen=True, eq=False)
class CountingSpan(Span):
    """A span that counts comparisons with other spans, and refuses more than ``budget``."""

    comparisons: ClassVar[list[int]] = [0]
    budget: ClassVar[int] = 0

    def __eq__(self, other: object) -> bool:
        self.comparisons[0] += 1
        if self.comparisons[0] > self.budget:
            raise AssertionError(f"more than {self.budget} span comparisons")
        return self is other

    __hash__ = Span.__hash__


def span(number: int, attributes: dict[str, Any], parent: str | None) -> Span:
    return CountingSpan(
        trace_id=TRACE_ID,
        span_id=f"{number:016x}",
        parent_id=parent,
        name="ChatCompletion" if parent else "workflow",
        start_ns=number,
        end_ns=number + 1,
        attributes=attributes,
        resource={"evalq.task_id": "t", "evalq.tool": "agent"},
        events=(),
        failed=False,
        status_message="",
    )


def llm_trace(spans: int, *, unpriced: int | None = None) -> list[Span]:
    """A root span and ``spans`` priced LLM spans under it (span ``unpriced`` has no cost)."""
    root = span(1, {}, None)
    llm = []
    for number in range(2, spans + 2):
        attributes: dict[str, Any] = {
            "openinference.span.kind": "LLM",
            "llm.model_name": "gpt-4o",
            "llm.token_count.prompt": 3,
            "llm.token_count.completion": 2,
        }
        if number != unpriced:
            attributes["llm.cost.total"] = COST
        llm.append(span(number, attributes, root.span_id))
    return [root, *llm]


@pytest.fixture(autouse=True)
def _count_from_zero() -> None:
    CountingSpan.comparisons[0] = 0
    CountingSpan.budget = SPANS


def test_thirty_thousand_priced_llm_spans_cost_one_comparison_per_span_at_most() -> None:
    (tree,) = trees_of(llm_trace(SPANS))
    submission = imported(tree, TraceDefaults()).submission
    assert submission.usage.cost_usd == pytest.approx(SPANS * COST)
    assert (submission.usage.input_tokens, submission.usage.output_tokens) == (3 * SPANS, 2 * SPANS)
    assert submission.usage.iterations == SPANS
    assert CountingSpan.comparisons[0] <= SPANS


def test_the_first_unpriced_span_of_thirty_thousand_is_named() -> None:
    (tree,) = trees_of(llm_trace(SPANS, unpriced=SPANS))
    with pytest.raises(InvalidInput) as caught:
        imported(tree, TraceDefaults())
    rule = "missing: other LLM spans of the trace carry a cost, so every one must"
    assert caught.value.problems == [(f"span {SPANS:016x} (ChatCompletion).llm.cost.total", rule)]
    assert CountingSpan.comparisons[0] <= SPANS


def test_traces_are_counted_by_distinct_id_and_no_further_than_asked() -> None:
    spans = [{"traceId": f"{number % 7:032x}", "spanId": f"{number:016x}"} for number in range(70)]
    spans.append({"traceId": f"{6:032X}", "spanId": "ff" * 8})  # upper case: the same trace
    data = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    assert count_traces(data, stop_after=100) == 7
    assert count_traces(data, stop_after=3) == 4
    assert count_traces(parse_json(data), stop_after=100) == 7
    assert count_traces({"resourceSpans": "not a list"}, stop_after=0) == 0
