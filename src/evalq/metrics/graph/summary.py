"""A compact, deterministic text summary of a trace, for the tier-2 planning-rationality judge.

Tier 2 (spec 001 ``extract_planning_decisions``) reads the trace through this function, so both
tiers parse the trace the same way. Layout (docs/trace-format.md):

    Trace: 3 tool calls by 2 agents (coder, planner); 2 messages; 1 handoff.
    Timing: 3 of 3 calls timed, 4.50s in tools, span 0.00s to 6.00s.
    Tool calls (n. agent: tool [context] duration):
      1. planner: search [find_papers] 1.50s
      ...
    Handoffs (step: from -> to):
      2: planner -> coder
    Messages by type: coordination 1, result_delivery 1 (coordination share 0.50).

Over ``max_chars``, whole lines are dropped from the middle of the tool-call and handoff lists
(first and last lines kept, with a line saying how many were omitted); the first two lines and
the message counts are always kept. Only if those alone exceed ``max_chars`` is the text cut.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from evalq.core.schemas import Trace, TraceStep
from evalq.metrics.graph.build import agents_of, handoffs
from evalq.metrics.graph.overhead import communication_overhead


def summarise_trace(trace: Trace, *, max_chars: int = 4000) -> str:
    """Summarise a trace in at most ``max_chars`` characters (see the module docstring)."""
    steps, messages = trace.steps, trace.messages
    moves = handoffs(steps)
    agents = sorted(agents_of(steps, messages))
    head = [
        f"Trace: {_count(len(steps), 'tool call')} by {_count(len(agents), 'agent')}"
        + (f" ({', '.join(_clean(a) for a in agents)})" if agents else "")
        + f"; {_count(len(messages), 'message')}; {_count(len(moves), 'handoff')}.",
        _timing(steps),
    ]
    tail = [_message_counts(trace)]
    calls = [f"  {i}. {_call(step)}" for i, step in enumerate(steps, start=1)]
    passes = [f"  {h.step + 1}: {_clean(h.sender)} -> {_clean(h.receiver)}" for h in moves]

    titles = ["Tool calls (n. agent: tool [context] duration):", "Handoffs (step: from -> to):"]
    full = _join(head, titles, calls, passes, tail)
    if len(full) <= max_chars:  # everything fits: nothing is dropped
        return full
    budget = max_chars - _size(head) - _size(tail) - 2  # the two section titles' newlines
    budget -= len(titles[0]) + (len(titles[1]) if passes else 0)
    pass_budget = _size(passes) if _size(calls) + _size(passes) <= budget else budget // 4
    passes = _fit(passes, min(_size(passes), pass_budget), "handoff")
    calls = _fit(calls, budget - _size(passes), "tool call")

    text = _join(head, titles, calls, passes, tail)
    if len(text) <= max_chars:
        return text
    return text[: max_chars - 3] + "..." if max_chars >= 3 else text[: max(0, max_chars)]


def _join(
    head: list[str], titles: list[str], calls: list[str], passes: list[str], tail: list[str]
) -> str:
    lines = [*head, titles[0], *calls]
    if passes:
        lines += [titles[1], *passes]
    return "\n".join([*lines, *tail])


def _call(step: TraceStep) -> str:
    agent = _clean(step.agent) if step.agent is not None else "-"
    text = f"{agent}: {_clean(step.tool)}"
    if step.context is not None:
        text += f" [{_clean(step.context)}]"
    if step.started_at is not None and step.ended_at is not None:
        text += f" {step.ended_at - step.started_at:.2f}s"
    return text


def _timing(steps: Sequence[TraceStep]) -> str:
    timed = [s for s in steps if s.started_at is not None and s.ended_at is not None]
    if not timed:
        return "Timing: no call timed."
    spent = sum((s.ended_at or 0.0) - (s.started_at or 0.0) for s in timed)
    first = min(s.started_at or 0.0 for s in timed)
    last = max(s.ended_at or 0.0 for s in timed)
    return (
        f"Timing: {len(timed)} of {len(steps)} calls timed, {spent:.2f}s in tools, "
        f"span {first:.2f}s to {last:.2f}s."
    )


def _message_counts(trace: Trace) -> str:
    overhead = communication_overhead(trace.messages)
    if overhead is None:
        return "Messages by type: none."
    counts = Counter(message.type for message in trace.messages)
    listed = ", ".join(f"{kind} {counts[kind]}" for kind in sorted(counts))
    return f"Messages by type: {listed} (coordination share {overhead:.2f})."


def _fit(lines: list[str], budget: int, noun: str) -> list[str]:
    """Keep the first and last lines that fit in ``budget`` characters, a marker between."""
    if _size(lines) <= budget:
        return lines
    head: list[str] = []
    tail: list[str] = []
    used = 0
    while len(head) + len(tail) < len(lines):
        take_head = len(head) <= len(tail)
        line = lines[len(head)] if take_head else lines[len(lines) - 1 - len(tail)]
        omitted = len(lines) - len(head) - len(tail) - 1
        marker = f"  ({_count(omitted, noun)} omitted)"
        if used + len(line) + 1 + len(marker) + 1 > budget:
            break
        used += len(line) + 1
        (head if take_head else tail).append(line)
    omitted = len(lines) - len(head) - len(tail)
    marker = f"  ({_count(omitted, noun)} omitted)"
    return [*head, marker, *reversed(tail)] if len(marker) + 1 <= budget else []


def _size(lines: Sequence[str]) -> int:
    """Characters of ``lines`` joined by newlines, counting one newline per line."""
    return sum(len(line) + 1 for line in lines)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _clean(name: str) -> str:
    """One line per call: collapse whitespace (names may contain newlines)."""
    return re.sub(r"\s+", " ", name).strip()
