"""What each rubric reads from a submission and its task, and when a rubric does not apply."""

from __future__ import annotations

from dataclasses import dataclass, field

from evalq.core.schemas import Submission, Task
from evalq.judge.rubrics import Rubric
from evalq.metrics.graph import summarise_trace

TRACE_SUMMARY_CHARS = 4000
"""Longest execution summary shown to the planning-rationality rubric."""


@dataclass(frozen=True)
class RubricInput:
    """The fields one rubric judges, or why it does not apply.

    Attributes:
        fields: field name -> text, in prompt order; empty when ``not_applicable`` is set.
        not_applicable: why the rubric has nothing to judge (the score is then None, never 0).
        truncated: field name -> {"original_chars", "kept_chars"} for each shortened field.
    """

    fields: dict[str, str] = field(default_factory=dict)
    not_applicable: str | None = None
    truncated: dict[str, dict[str, int]] = field(default_factory=dict)


def rubric_input(
    rubric: Rubric, submission: Submission, task: Task, paper_chars: int
) -> RubricInput:
    """Collect ``rubric``'s fields; the paper is cut to ``paper_chars`` and the cut recorded."""
    review = submission.output
    available: dict[str, str] = {}
    truncated: dict[str, dict[str, int]] = {}
    for name in rubric.fields:
        if name == "review":
            if not review.strip():
                return RubricInput(not_applicable="the submission has no output text to judge")
            available[name] = review
        elif name == "paper":
            paper = task.context or ""
            if not paper.strip():
                return RubricInput(not_applicable="the task has no paper context")
            if len(paper) > paper_chars:
                truncated[name] = {"original_chars": len(paper), "kept_chars": paper_chars}
                paper = paper[:paper_chars]
            available[name] = paper
        elif name == "execution_summary":
            trace = submission.trace
            if trace is None or not (trace.steps or trace.messages):
                return RubricInput(not_applicable="the submission has no execution trace")
            available[name] = summarise_trace(trace, max_chars=TRACE_SUMMARY_CHARS)
        else:
            raise ValueError(f"rubric {rubric.name} reads unknown field {name!r}")
    return RubricInput(available, None, truncated)
