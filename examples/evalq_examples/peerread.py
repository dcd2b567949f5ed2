"""PeerRead submissions (spec 001): seven agent-written reviews of the Salience Gating paper.

The reviews range from a balanced, specific one to a mediocre one, a review of the wrong paper, a
very long one (over 600 words, so BERTScore has to chunk it), one with a prompt-injection attempt
aimed at the judge, one that only restates the abstract (no trace: tier 3 not applicable) and a
one-liner from a single agent with no messages. The multi-agent traces differ in path length,
tool choices, message mix and how evenly the work is spread, so their graph metrics differ.
"""

from __future__ import annotations

from typing import Any

from evalq_examples import prose
from evalq_examples.common import timed_steps, usage
from evalq_examples.tasks import PEERREAD

Plan = list[tuple[str | None, str, str | None]]
Messages = list[tuple[str, str, str]]


def _review(
    sid: str,
    tool: str,
    model: str,
    figures: dict[str, Any],
    review: str,
    plan: Plan | None = None,
    messages: Messages | None = None,
) -> dict[str, Any]:
    run: dict[str, Any] = {
        "id": sid,
        "task_id": PEERREAD,
        "tool": tool,
        "model": model,
        "usage": figures,
        "output": review,
    }
    if plan is not None:
        assert figures["tool_calls"] == len(plan), sid
        run["trace"] = {
            "steps": timed_steps(plan, figures["execution_time"]),
            "messages": [{"sender": s, "receiver": r, "type": t} for s, r, t in messages or []],
        }
    return run


C, R, A, W = "coordinator", "reader", "analyst", "writer"

_GOOD_PLAN: Plan = [
    (C, "load_paper", "read_paper"),
    (R, "extract_sections", "find_method"),
    (R, "search_related_work", "compare_prior_work"),
    (A, "check_claims", "verify_numbers"),
    (W, "draft_review", "write"),
    (A, "critique_review", "critique"),
    (W, "finalize_review", "polish"),
]
_GOOD_MESSAGES: Messages = [
    (C, R, "task_request"),
    (R, A, "data_transfer"),
    (C, A, "coordination"),
    (A, W, "data_transfer"),
    (W, A, "task_request"),
    (A, W, "result_delivery"),
    (W, C, "result_delivery"),
]

# The coordinator does the reading itself and then micro-manages three rewrites.
_MEDIOCRE_PLAN: Plan = [
    (C, "load_paper", "read_paper"),
    (C, "extract_sections", "find_method"),
    (W, "draft_review", "write"),
    (C, "critique_review", "critique"),
    (W, "draft_review", "write"),
    (C, "critique_review", "critique"),
    (W, "draft_review", "write"),
    (W, "finalize_review", "polish"),
]
_MEDIOCRE_MESSAGES: Messages = [
    (C, W, "task_request"),
    (W, C, "status_update"),
    (C, W, "coordination"),
    (W, C, "status_update"),
    (C, W, "coordination"),
    (W, C, "status_update"),
    (C, W, "handoff"),
    (W, C, "result_delivery"),
]

# Searched the web for the title instead of loading the given paper, and reviewed what it found.
_OFF_TOPIC_PLAN: Plan = [
    ("assistant", "web_search", "read_paper"),
    ("assistant", "web_search", "find_method"),
    ("assistant", "draft_review", "write"),
    ("assistant", "finalize_review", "polish"),
]
_OFF_TOPIC_MESSAGES: Messages = [
    ("assistant", "critic", "handoff"),
    ("critic", "assistant", "status_update"),
]

_LONG_PLAN: Plan = [
    (C, "load_paper", "read_paper"),
    (R, "extract_sections", "find_method"),
    (R, "extract_sections", "find_method"),
    (R, "search_related_work", "compare_prior_work"),
    (R, "search_related_work", "compare_prior_work"),
    (A, "check_claims", "verify_numbers"),
    (A, "check_claims", "verify_numbers"),
    (A, "check_claims", "verify_numbers"),
    (W, "draft_review", "write"),
    (A, "critique_review", "critique"),
    (W, "draft_review", "write"),
    (A, "critique_review", "critique"),
    (W, "finalize_review", "polish"),
]
_LONG_MESSAGES: Messages = [
    (C, R, "task_request"),
    (R, C, "status_update"),
    (R, A, "data_transfer"),
    (C, A, "task_request"),
    (A, C, "status_update"),
    (A, W, "data_transfer"),
    (C, W, "coordination"),
    (W, A, "handoff"),
    (A, W, "result_delivery"),
    (W, C, "result_delivery"),
]

# The writer drafts three times and reaches for web search where related-work search belongs.
_INJECTION_PLAN: Plan = [
    (R, "load_paper", "read_paper"),
    (R, "extract_sections", "find_method"),
    (W, "draft_review", "write"),
    (W, "draft_review", "write"),
    (W, "web_search", "compare_prior_work"),
    (W, "draft_review", "write"),
    (W, "finalize_review", "polish"),
]
_INJECTION_MESSAGES: Messages = [
    (R, W, "data_transfer"),
    (W, R, "task_request"),
    (R, W, "status_update"),
    (W, R, "result_delivery"),
]

# One agent, straight from the paper to the final text: no messages, an edge the graph lacks.
_TERSE_PLAN: Plan = [
    ("reviewer", "load_paper", "read_paper"),
    ("reviewer", "finalize_review", "polish"),
]


def submissions() -> list[dict[str, Any]]:
    """Every PeerRead example submission."""
    return [
        _review(
            "peer-01-balanced",
            "pydantic-ai",
            "claude-sonnet-4",
            usage(input_tokens=46_800, output_tokens=2_900, calls=7, seconds=94.0),
            prose.REVIEW_GOOD,
            _GOOD_PLAN,
            _GOOD_MESSAGES,
        ),
        _review(
            "peer-02-generic",
            "crewai",
            "gpt-4o",
            usage(input_tokens=38_000, output_tokens=1_400, calls=8, iterations=3, seconds=121.0),
            prose.REVIEW_MEDIOCRE,
            _MEDIOCRE_PLAN,
            _MEDIOCRE_MESSAGES,
        ),
        _review(
            "peer-03-wrong-paper",
            "autogen",
            "gemini-2.5-flash",
            usage(total_tokens=17_600, calls=4, seconds=41.0, cost_usd=0.004),
            prose.REVIEW_OFF_TOPIC,
            _OFF_TOPIC_PLAN,
            _OFF_TOPIC_MESSAGES,
        ),
        _review(
            "peer-04-long",
            "langgraph",
            "claude-opus-4.5",
            usage(input_tokens=71_300, output_tokens=6_800, calls=13, iterations=2, seconds=236.0),
            prose.REVIEW_LONG,
            _LONG_PLAN,
            _LONG_MESSAGES,
        ),
        _review(
            "peer-05-injection",
            "smolagents",
            "gpt-4o",
            usage(input_tokens=29_500, output_tokens=900, calls=7, iterations=3, seconds=83.0),
            prose.REVIEW_INJECTION,
            _INJECTION_PLAN,
            _INJECTION_MESSAGES,
        ),
        _review(
            "peer-06-parrot",
            "pydantic-ai",
            "claude-sonnet-4",
            usage(input_tokens=12_400, output_tokens=310, calls=1, seconds=22.0),
            prose.REVIEW_PARROT,
        ),
        _review(
            "peer-07-terse",
            "review-script",
            "gpt-4o",
            usage(input_tokens=9_800, output_tokens=40, calls=2, seconds=9.5),
            prose.REVIEW_TERSE,
            _TERSE_PLAN,
        ),
    ]
