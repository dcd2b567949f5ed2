"""Results out: an evaluation as a ``gen_ai.evaluation.result`` event, emitted through the real
OpenTelemetry SDK (an in-memory exporter) and linked to the run's trace and root span."""

from __future__ import annotations

from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

from evalq.core.profile import Profile
from evalq.core.schemas import Submission, Task
from evalq.scoring.arena import compute_baseline
from evalq.scoring.evaluation import evaluate_submission
from evalq.scoring.evaluation_event import evaluation_event
from evalq.service.results_out import emit_to

PROFILE = Profile()
TASK = Task.model_validate(
    {"id": "t", "category": "debugging", "success_criteria": [{"type": "no_errors"}]}
)
TRACE_ID, SPAN_ID = "5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174"


def scored() -> tuple[Submission, object]:
    sub = Submission.model_validate(
        {
            "id": "otlp-1",
            "task_id": "t",
            "tool": "aider",
            "model": "gpt-4o",
            "usage": {"total_tokens": 1000, "tool_calls": 2, "execution_time": 30.0},
            "metadata": {"trace_id": TRACE_ID, "span_id": SPAN_ID, "gen_ai.conversation.id": "c"},
        }
    )
    baseline = compute_baseline([], PROFILE.arena)
    return sub, evaluate_submission(sub, TASK, {}, baseline, PROFILE, cost_usd=None)


def test_an_arena_evaluation_is_one_event_linked_to_the_runs_root_span() -> None:
    sub, result = scored()
    event = evaluation_event(
        submission_id=sub.id,
        task_id="t",
        status=result.status,  # type: ignore[attr-defined]
        scores=result.scores,  # type: ignore[attr-defined]
        missing=result.missing,  # type: ignore[attr-defined]
        metadata=sub.metadata,
    )
    assert (event.trace_id, event.span_id) == (TRACE_ID, SPAN_ID)
    attributes = event.attributes
    assert attributes["gen_ai.evaluation.name"] == "evalq.arena_overall_unadjusted"
    value = result.scores.arena.unadjusted_score  # type: ignore[attr-defined]
    assert attributes["gen_ai.evaluation.score.value"] == value
    assert "gen_ai.evaluation.score.label" not in attributes  # the arena decides no label
    assert attributes["gen_ai.conversation.id"] == "c"
    assert "tiers missing" in str(attributes["gen_ai.evaluation.explanation"])

    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    assert emit_to(provider, [event]) == 1
    [data] = exporter.get_finished_logs()
    record = data.log_record
    assert record.event_name == "gen_ai.evaluation.result"
    assert (f"{record.trace_id:032x}", f"{record.span_id:016x}") == (TRACE_ID, SPAN_ID)
    assert record.attributes is not None
    assert record.attributes["evalq.submission_id"] == "otlp-1"
    provider.shutdown()


def test_a_run_that_was_no_trace_or_names_bad_ids_is_not_linked() -> None:
    sub, result = scored()
    for metadata in ({}, {"trace_id": "nothex", "span_id": SPAN_ID}, {"trace_id": TRACE_ID}):
        event = evaluation_event(
            submission_id=sub.id,
            task_id="t",
            status="failed",
            scores=result.scores,  # type: ignore[attr-defined]
            metadata=metadata,
        )
        assert event.span_id is None
        assert event.attributes["error.type"] == "evalq.evaluation_failed"
