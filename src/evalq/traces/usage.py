"""Usage from the spans: tokens and cost summed over LLM spans, tool calls, iterations, time.

Tokens are summed over LLM spans only: frameworks also put running totals on agent spans, and
adding those would count every token twice.
"""

from __future__ import annotations

from typing import Any

from evalq.core.errors import InvalidInput
from evalq.traces import names
from evalq.traces.otlp import Span
from evalq.traces.tree import SpanTree, is_openinference

Provenance = dict[str, str]


def usage_of(tree: SpanTree, where: Provenance) -> dict[str, Any]:
    """The submission's ``usage`` object; records in ``where`` which span gave what."""
    llm_spans = tree.of_kind("llm")
    usage: dict[str, Any] = tokens_of(tree, llm_spans)
    usage["tool_calls"] = len(tree.of_kind("tool"))
    usage["iterations"] = max(1, len(llm_spans))
    usage["execution_time"] = max(0, tree.root.end_ns - tree.root.start_ns) / 1e9
    cost = cost_of(tree, llm_spans, where)
    if cost is not None:
        usage["cost_usd"] = cost
    return usage


def tokens_of(tree: SpanTree, llm_spans: list[Span]) -> dict[str, int]:
    """Input and output tokens when every LLM span splits them, else the total only."""
    if not llm_spans:
        rule = (
            "the trace has no LLM span (openinference.span.kind LLM, or gen_ai.operation.name "
            "chat / text_completion / generate_content), so its tokens are unknown"
        )
        raise InvalidInput([(f"{tree.root.label}.{names.GEN_AI_USAGE_INPUT_TOKENS}", rule)])
    counts = [span_tokens(span) for span in llm_spans]
    if all(input_ is not None for input_, _, _ in counts):
        return {
            "input_tokens": sum(input_ or 0 for input_, _, _ in counts),
            "output_tokens": sum(output or 0 for _, output, _ in counts),
        }
    return {"total_tokens": sum(total for _, _, total in counts)}


def span_tokens(span: Span) -> tuple[int | None, int | None, int]:
    """(input, output, total) of one LLM span; input and output are None if only a total is."""
    input_key, output_key = (
        (names.OI_TOKENS_PROMPT, names.OI_TOKENS_COMPLETION)
        if is_openinference(span)
        else (names.GEN_AI_USAGE_INPUT_TOKENS, names.GEN_AI_USAGE_OUTPUT_TOKENS)
    )
    input_ = count(span, names.GEN_AI_USAGE_INPUT_TOKENS, names.OI_TOKENS_PROMPT)
    output = count(span, names.GEN_AI_USAGE_OUTPUT_TOKENS, names.OI_TOKENS_COMPLETION)
    if input_ is not None and output is not None:
        return input_, output, input_ + output
    total = count(span, names.OI_TOKENS_TOTAL)
    if total is not None and input_ is None and output is None:
        return None, None, total
    missing = output_key if input_ is not None else input_key
    rule = f"missing: an LLM span carries {input_key} and {output_key}"
    if is_openinference(span):
        rule += f" (or {names.OI_TOKENS_TOTAL})"
    raise InvalidInput([(f"{span.label}.{missing}", rule)])


def count(span: Span, *keys: str) -> int | None:
    """The first of ``keys`` the span carries, as a non-negative integer; None if none."""
    for key in keys:
        if key in span.attributes:
            value = span.attributes[key]
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                rule = f"must be a non-negative integer, not {type(value).__name__} {value!r:.40}"
                raise InvalidInput([(f"{span.label}.{key}", rule)])
            return value
    return None


def cost_of(tree: SpanTree, llm_spans: list[Span], where: Provenance) -> float | None:
    """``evalq.cost_usd`` if the trace carries it; else the sum of every LLM span's
    ``llm.cost.total``; None when no span prices itself.

    A cost on some LLM spans but not all would report part of the run as all of it, so it is
    refused, naming the first span without one.
    """
    stated = tree.first(names.EVALQ_COST_USD)
    if stated is not None:
        value, where["usage.cost_usd"] = stated
        return dollars(value, where["usage.cost_usd"])
    # One pass, no membership tests: a trace may hold tens of thousands of LLM spans (searching
    # a list of the priced ones for each span took 13 s at 30,000).
    unpriced = [span for span in llm_spans if names.OI_COST_TOTAL not in span.attributes]
    if len(unpriced) == len(llm_spans):
        return None
    if unpriced:
        rule = "missing: other LLM spans of the trace carry a cost, so every one must"
        raise InvalidInput([(f"{unpriced[0].label}.{names.OI_COST_TOTAL}", rule)])
    where["usage.cost_usd"] = f"trace {tree.trace_id} {names.OI_COST_TOTAL}"
    return sum(
        dollars(span.attributes[names.OI_COST_TOTAL], f"{span.label}.{names.OI_COST_TOTAL}")
        for span in llm_spans
    )


def dollars(value: Any, where: str) -> float:
    """A cost attribute as a non-negative float."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        raise InvalidInput([(where, f"must be a non-negative number, not {value!r:.40}")])
    return float(value)
