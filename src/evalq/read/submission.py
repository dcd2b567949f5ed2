"""One submission as clients see it: status, tier outcomes, and its scores today.

The Arena scores depend on the task's baseline, which moves as submissions arrive. What a client
reads is the score against the task's *current* baseline (re-scored from the stored raw figures,
as the leaderboard does), with that baseline's version, so a submission shows one Arena number
wherever it is looked at; the score as merged stays in the stored history under ``merged``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import Field
from sqlalchemy.orm import Session

from evalq.core.integrity import IntegrityHit
from evalq.core.judge_validation import JudgeValidation
from evalq.core.redact import redact_data
from evalq.core.results import (
    ArenaScores,
    ErrorRecord,
    EvaluationScores,
    MissingTier,
    TierStatus,
)
from evalq.core.review_decisions import ReviewDecision
from evalq.core.schemas import STORED, Submission, Tier
from evalq.core.settings import Settings
from evalq.core.status import Status
from evalq.read.criteria import CriteriaCheck, check_criteria
from evalq.read.reply import Reply
from evalq.read.usage import UsageSource, usage_source
from evalq.read.view import task_context
from evalq.scoring.injection import injection_notes, stored_marks
from evalq.store import queries, traces
from evalq.store.models import Review


class TierState(Reply):
    """One tier of a submission as stored: its status, result and error."""

    status: TierStatus
    metrics: dict[str, Any] | None = Field(
        description='The tier\'s result (docs/scoring/); {"reason": ...} when skipped.'
    )
    error: ErrorRecord | None = Field(description="Why it failed; tracebacks are not served.")


class TraceSummary(Reply):
    """The OTLP trace a submission was made from (spans streamed to POST /v1/traces)."""

    trace_id: str
    service_name: str | None = Field(description="The resource's service.name.")
    spans: int = Field(description="Spans the submission was made from.")
    late_spans: int = Field(
        description="Spans that arrived after the trace was finalised: stored, not evaluated."
    )
    started_at: str | None = Field(description="ISO 8601: the earliest span's start.")
    ended_at: str | None = Field(description="ISO 8601: the latest span's end.")


class Merged(Reply):
    """The Arena scores as the merge stored them, against the baseline of that moment."""

    arena: ArenaScores
    baseline_version: int


class SubmissionResult(Reply):
    """Body of GET /v1/submissions/{id} (`evalq.read.submission.submission_result`).

    The fields from ``scores`` on are present only once the submission is evaluated (status
    done, degraded or failed); before that they are absent, not null.
    """

    id: str
    task_id: str
    status: Status
    error: ErrorRecord | None = Field(description="Why a failed evaluation failed.")
    review: Review | None = Field(
        description="flagged: left out of the baseline until a person accepts it; null: never."
    )
    review_decisions: list[ReviewDecision] = Field(
        default_factory=list,
        description="Who accepted or un-accepted the run, when and why; newest first.",
    )
    metadata: dict[str, Any] = Field(description="The submission's metadata, as sent.")
    usage_source: UsageSource = Field(
        description="Where the run's usage comes from (docs/scoring.md): collected-trace (the "
        "OTLP intake assembled it from spans sent under a key the task trusts), own-trace (a "
        "trace the submitter sent: consistent, not verified) or self-reported."
    )
    tiers: dict[Tier, TierState] = Field(description="The tiers that started, by name.")
    scores: EvaluationScores | None = Field(
        default=None, description="Arena scores against the task's current baseline."
    )
    missing_tiers: dict[Tier, MissingTier] | None = Field(
        default=None, description="Each tier that produced no result, and why."
    )
    baseline_version: int | None = Field(
        default=None, description="The current baseline, which `scores.arena` is against."
    )
    profile_hash: str | None = Field(default=None, description="The scoring profile used.")
    evaluated_at: str | None = Field(default=None, description="ISO 8601, as stored.")
    merged: Merged | None = None
    criteria: CriteriaCheck | None = Field(
        default=None,
        description="The task's success criteria against the run's evidence, and the evidence "
        "no criterion names; null when there are neither.",
    )
    trace: TraceSummary | None = Field(
        default=None, description="Present when the submission was made from streamed spans."
    )
    injection: list[str] = Field(
        default_factory=list,
        description="Each sentence of the output that instructs its evaluator, what it does "
        "and why it was marked (docs/scoring.md, 'Instructions to the evaluator'): the tiers "
        "read the output without them; empty when none.",
    )
    judge_validation: JudgeValidation | None = Field(
        default=None,
        description="The judge's agreement with people's labels and whether its scores are "
        "validated (docs/judge.md); absent when no judge score is shown.",
        exclude_if=lambda value: value is None,
    )
    integrity: list[IntegrityHit] | None = Field(
        default=None,
        description="The tool calls that touched what the task protects (which call, what "
        "path or URL, which rule): the run is held for review (docs/integrity.md); absent "
        "when none did.",
        exclude_if=lambda value: value is None,
    )


def submission_result(
    session: Session, *, submission_id: str, settings: Settings | None = None
) -> SubmissionResult:
    """Status, scores (Arena against the current baseline), tier outcomes with their errors
    (tracebacks left out), the review state, and the evaluation as merged.

    Configured secrets are removed again on the way out (`redact_data`): rows stored before
    redaction existed may still hold one.

    Raises:
        NotFound: no such submission.
    """
    row = queries.get_submission_row(session, submission_id=submission_id)
    evaluation = queries.get_evaluation(session, submission_id=submission_id)
    tiers = queries.tier_results(session, submission_id=submission_id)
    result: dict[str, Any] = {
        "id": row.id,
        "task_id": row.task_id,
        "status": row.status,
        "error": row.error,
        "review": row.review,
        "review_decisions": [
            d.model_dump(mode="json")
            for d in queries.review_decisions(session, submission_id=submission_id)
        ],
        "metadata": row.payload.get("metadata") or {},
        "usage_source": usage_source(row.trace_provenance),
        "integrity": row.integrity,
        "tiers": {
            name: {"status": t.status, "metrics": t.metrics, "error": _public(t.error)}
            for name, t in sorted(tiers.items())
        },
    }
    trace = traces.trace_of_submission(session, submission_id=submission_id)
    if trace is not None:
        result["trace"] = {
            "trace_id": trace.trace_id,
            "service_name": trace.service_name,
            "spans": trace.span_count,
            "late_spans": trace.late_spans,
            "started_at": _iso(trace.start_ns),
            "ended_at": _iso(trace.end_ns),
        }
    if evaluation is None:
        return SubmissionResult.model_validate(redact_data(result, settings))
    context = task_context(session, task_id=row.task_id, settings=settings)
    current = context.current
    submission = Submission.model_validate(row.payload, context=STORED)
    arena = context.arena(submission, row.cost_usd)
    scores = dict(evaluation.scores)
    scores["arena"] = arena.model_dump(mode="json")
    result |= {
        "scores": scores,
        "injection": injection_notes(
            submission.output, stored_marks(EvaluationScores.model_validate(scores))
        ),
        "missing_tiers": evaluation.missing_tiers,
        "baseline_version": current.version,
        "profile_hash": evaluation.profile_hash,
        "evaluated_at": evaluation.evaluated_at.isoformat(),
        "merged": {
            "arena": evaluation.scores.get("arena"),
            "baseline_version": evaluation.baseline_version,
        },
    }
    criteria = check_criteria(context.task, submission.evidence)
    if criteria is not None:
        result["criteria"] = criteria.model_dump(mode="json")
    return SubmissionResult.model_validate(redact_data(result, settings))


def _iso(time_ns: int | None) -> str | None:
    if time_ns is None:
        return None
    return datetime.fromtimestamp(time_ns / 1e9, UTC).isoformat()


def _public(error: dict[str, Any] | None) -> dict[str, Any] | None:
    """A stored tier error without its traceback (kept in the store for operators)."""
    if error is None:
        return None
    return ErrorRecord.model_validate(error).public().model_dump(mode="json", exclude_none=True)
