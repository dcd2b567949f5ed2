"""One evaluation as an OpenTelemetry ``gen_ai.evaluation.result`` event (results out).

The attributes follow the OpenTelemetry GenAI semantic conventions (semantic-conventions
v1.38.0, where the event was added; status Development, now kept in
open-telemetry/semantic-conventions-genai): ``gen_ai.evaluation.name`` (required),
``gen_ai.evaluation.score.value`` and ``gen_ai.evaluation.score.label`` (when the kind has
them), ``gen_ai.evaluation.explanation``, and ``error.type`` for an evaluation that failed.
The event SHOULD be parented to the span it evaluates: a run that came in as a trace carries
its trace and root span ids (``metadata.trace_id`` / ``metadata.span_id``), and the event is
linked to them. evalq's own ``evalq.*`` attributes say which run and task it is about.

One event per evaluation, its value the one the task's leaderboard ranks by (`KINDS`), as the
merge scored it. Pure: the emitter is `evalq.service.results_out`.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from evalq.core.results import EvaluationScores
from evalq.core.status import EvaluationStatus
from evalq.scoring.kinds import KINDS

EVENT_NAME = "gen_ai.evaluation.result"
EVALUATION_NAME = "gen_ai.evaluation.name"
SCORE_VALUE = "gen_ai.evaluation.score.value"
SCORE_LABEL = "gen_ai.evaluation.score.label"
EXPLANATION = "gen_ai.evaluation.explanation"
ERROR_TYPE = "error.type"
CONVERSATION_ID = "gen_ai.conversation.id"

TRACE_ID = re.compile(r"^[0-9a-f]{32}$")
SPAN_ID = re.compile(r"^[0-9a-f]{16}$")

Attribute = str | float | int | bool


@dataclass(frozen=True)
class EvaluationEvent:
    """A ``gen_ai.evaluation.result`` event, ready for an OpenTelemetry logger.

    Attributes:
        attributes: the event's attributes (semantic-convention names and ``evalq.*``).
        trace_id / span_id: the evaluated run's trace and root span (lowercase hex), when the
            run came in as a trace; None otherwise.
    """

    attributes: dict[str, Attribute]
    trace_id: str | None = None
    span_id: str | None = None


def evaluation_event(
    *,
    submission_id: str,
    task_id: str,
    status: EvaluationStatus,
    scores: EvaluationScores,
    missing: Collection[str] = (),
    metadata: Mapping[str, Any] | None = None,
) -> EvaluationEvent:
    """The event of one merged evaluation."""
    rule = KINDS[scores.kind]
    value, label = _value_and_label(scores)
    attributes: dict[str, Attribute] = {
        EVALUATION_NAME: f"evalq.{rule.ranking_key}",
        "evalq.submission_id": submission_id,
        "evalq.task_id": task_id,
        "evalq.evaluation.status": status,
    }
    if value is not None:
        attributes[SCORE_VALUE] = float(value)
    if label is not None:
        attributes[SCORE_LABEL] = label
    attributes[EXPLANATION] = _explanation(rule.ranking_key, status, value, missing, scores)
    if status == "failed":
        attributes[ERROR_TYPE] = "evalq.evaluation_failed"
    metadata = metadata or {}
    for key in (CONVERSATION_ID, "session.id"):
        found = metadata.get(key)
        if isinstance(found, str) and found:
            attributes[key] = found
    trace_id, span_id = metadata.get("trace_id"), metadata.get("span_id")
    linked = isinstance(trace_id, str) and TRACE_ID.match(trace_id)
    return EvaluationEvent(
        attributes,
        trace_id=trace_id if linked else None,
        span_id=span_id if linked and isinstance(span_id, str) and SPAN_ID.match(span_id) else None,
    )


def _value_and_label(scores: EvaluationScores) -> tuple[float | None, str | None]:
    """The kind's ranking value and, where the kind decides one, its label."""
    if scores.kind == "peerread" and scores.peerread is not None:
        return scores.peerread.composite, scores.peerread.recommendation
    if scores.kind == "scylla" and scores.scylla is not None:
        passed = scores.scylla.passed
        return scores.scylla.composite, None if passed is None else _pass(passed)
    if scores.kind == "suite" and scores.suite is not None:
        return scores.suite.final_score, _pass(scores.suite.passed)
    return scores.arena.unadjusted_score, None


def _pass(passed: bool) -> str:
    return "pass" if passed else "fail"


def _explanation(
    key: str,
    status: EvaluationStatus,
    value: float | None,
    missing: Collection[str],
    scores: EvaluationScores,
) -> str:
    shown = "not computed" if value is None else f"{value:.4g}"
    words = [f"evalq {scores.kind} evaluation, {status}: {key} {shown}"]
    if missing:
        words.append(f"tiers missing: {', '.join(sorted(missing))}")
    if scores.review.flags:
        words.append(f"held for review: {', '.join(scores.review.flags)}")
    return "; ".join(words)
