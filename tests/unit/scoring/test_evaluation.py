"""The merge's pure part: which scorers apply, and how absent tiers are treated."""

from __future__ import annotations

import math
from typing import Any

import pytest

from evalq.core.pricing import price_submission
from evalq.core.profile import Profile
from evalq.core.results import (
    ErrorRecord,
    GraphResult,
    JudgeResult,
    MissingTier,
    PriceSource,
    RubricResult,
    RunCost,
    TextResult,
    TierOutcome,
)
from evalq.core.schemas import Submission, Task
from evalq.metrics.text import success_of
from evalq.scoring.arena import compute_baseline
from evalq.scoring.evaluation import EvaluationResult, evaluate_submission

PROFILE = Profile()
RUBRICS = ("planning_rationality", "technical_accuracy", "constructiveness")
BASELINE = compute_baseline([], PROFILE.arena)
TASK = Task.model_validate(
    {"id": "t", "category": "debugging", "success_criteria": [{"type": "no_errors"}]}
)
REVIEW = Task.model_validate(  # reference outputs: a PeerRead task
    {
        "id": "t",
        "category": "data_analysis",
        "reference_outputs": ["A careful review."],
        "optimal_tools": {"read": "load_paper"},
    }
)
TIME = 1 / (1 + math.log(1 + 30.0))  # normalise_time(30 s)
TEXT = TierOutcome(
    tier="text",
    status="ok",
    result=TextResult(
        cosine=0.5,
        jaccard=0.4,
        semantic=0.7,
        references=1,
        overall_similarity=0.6,
        task_success=0.0,
        tier_score=0.5,
    ),
)
GRAPH = TierOutcome(
    tier="graph",
    status="ok",
    result=GraphResult(coordination_quality=0.8, tool_efficiency=1.0),
)
JUDGE = TierOutcome(
    tier="judge",
    status="ok",
    result=JudgeResult(
        scores={"technical_accuracy": 0.5, "constructiveness": 0.75, "planning_rationality": 1.0},
        failed=False,
    ),
)
SKIPPED = TierOutcome(tier="judge", status="skipped", reason="no judge configured")
FAILED = TierOutcome(
    tier="judge",
    status="failed",
    error=ErrorRecord(type="ModelHTTPError", message="500", kind="transient", traceback="..."),
)


def evaluate(sub: Submission, task: Task, tiers: dict[str, TierOutcome]) -> EvaluationResult:
    """The merge's call: the cost as priced at submit (stored on the row)."""
    cost = price_submission(sub, PROFILE)
    return evaluate_submission(sub, task, tiers, BASELINE, PROFILE, cost_usd=cost)  # type: ignore[arg-type]


def submission(**changes: Any) -> Submission:
    data: dict[str, Any] = {
        "id": "s",
        "task_id": "t",
        "tool": "aider",
        "model": "gpt-4o",
        "usage": {"total_tokens": 1000, "tool_calls": 5, "execution_time": 30.0},
    }
    return Submission.model_validate(data | changes)


def test_all_tiers_present_is_done_and_peerread_is_the_plain_mean() -> None:
    result = evaluate(submission(), REVIEW, {"text": TEXT, "judge": JUDGE, "graph": GRAPH})
    assert result.status == "done" and result.missing == {}
    peer = result.scores.peerread
    assert peer is not None and result.scores.kind == "peerread"
    # mean of (time, task success 0, similarity 0.6, coordination 0.8, tool efficiency 1, the
    # judge's planning 1, technical accuracy 0.5 and constructiveness 0.75)
    assert peer.composite == pytest.approx((TIME + 0 + 0.6 + 0.8 + 1.0 + 1.0 + 0.5 + 0.75) / 8)
    assert peer.not_reported == () and not peer.partial
    assert result.scores.judge["planning_rationality"] == 1.0


def test_no_judge_in_the_deployment_leaves_its_input_out_for_everyone() -> None:
    result = evaluate(submission(), REVIEW, {"text": TEXT, "judge": SKIPPED, "graph": GRAPH})
    assert result.status == "done"
    assert result.missing == {"judge": MissingTier(status="skipped", reason="no judge configured")}
    peer = result.scores.peerread
    assert peer is not None and not peer.partial
    assert peer.missing == RUBRICS
    assert peer.composite == pytest.approx((TIME + 0 + 0.6 + 0.8 + 1.0) / 5)


def test_failed_judge_degrades_marks_the_composite_partial_and_hides_the_traceback() -> None:
    result = evaluate(submission(), REVIEW, {"text": TEXT, "judge": FAILED, "graph": GRAPH})
    assert result.status == "degraded"
    assert result.missing["judge"] == MissingTier(
        status="failed",
        error=ErrorRecord(type="ModelHTTPError", message="500", kind="transient"),
    )
    peer = result.scores.peerread
    assert peer is not None and peer.partial and peer.missing == RUBRICS
    assert peer.composite == pytest.approx((TIME + 0 + 0.6 + 0.8 + 1.0) / 5)  # never a 0


@pytest.mark.parametrize("unmeasured", [None, 0.0])
def test_time_not_reported_or_zero_counts_as_the_worst_value(unmeasured: float | None) -> None:
    tiers = {"text": TEXT, "judge": JUDGE, "graph": GRAPH}
    timed = evaluate(submission(), REVIEW, tiers).scores.peerread
    usage = {"total_tokens": 1000, "tool_calls": 5, "execution_time": unmeasured}
    untimed = evaluate(submission(usage=usage), REVIEW, tiers).scores.peerread
    assert timed is not None and untimed is not None
    # the same input set for both; leaving the time out (or reporting 0) never raises a score
    assert untimed.not_reported == ("time_taken",)
    assert untimed.composite == pytest.approx((0 + 0 + 0.6 + 0.8 + 1.0 + 1.0 + 0.5 + 0.75) / 8)
    assert untimed.composite < timed.composite
    assert untimed.inputs["time_taken"] == 0.0


def test_a_missing_trace_counts_its_graph_inputs_as_the_worst_value() -> None:
    no_trace = TierOutcome(tier="graph", status="skipped", reason="the submission has no trace")
    result = evaluate(submission(), REVIEW, {"text": TEXT, "judge": JUDGE, "graph": no_trace})
    peer = result.scores.peerread
    assert result.status == "done" and peer is not None
    assert peer.not_reported == ("coordination_quality", "tool_efficiency")
    assert peer.composite == pytest.approx((TIME + 0 + 0.6 + 0 + 0 + 1.0 + 0.5 + 0.75) / 8)


def test_peerread_applies_only_to_peerread_tasks() -> None:
    result = evaluate(submission(), TASK, {"text": TEXT, "judge": JUDGE, "graph": GRAPH})
    assert result.scores.kind == "arena"
    assert result.scores.peerread is None and result.scores.scylla is None


def test_an_outlier_is_flagged_for_review_with_its_indicators() -> None:
    # 100 tokens (< 10% of the median 20000), 2 s, one tool call: three of spec 000's flags
    usage = {"total_tokens": 100, "tool_calls": 1, "execution_time": 2.0}
    review = evaluate(submission(usage=usage), TASK, {}).scores.review
    assert review.flags == ("extremely_efficient_tokens", "extremely_fast", "minimal_tool_usage")
    assert evaluate(submission(), TASK, {}).scores.review.flags == ()


def test_a_scylla_run_with_neither_criteria_nor_a_pass_flag_has_no_pass() -> None:
    bare = TASK.model_copy(update={"success_criteria": []})
    scylla = evaluate(submission(variant="T0", impl_rate=0.9), bare, {}).scores.scylla
    assert scylla is not None
    assert scylla.passed is None and scylla.pass_rate is None  # was a vacuous pass, grade A
    assert scylla.composite == pytest.approx(0.9)  # the implementation rate alone


def test_an_absent_tier_degrades() -> None:
    result = evaluate(submission(), TASK, {"text": TEXT})
    assert result.status == "degraded"
    assert result.missing["graph"] == MissingTier(status="absent")


def test_a_poisoned_tier_fails_the_evaluation_with_the_reason_and_keeps_the_rest() -> None:
    poisoned = TierOutcome(
        tier="text",
        status="failed",
        error=ErrorRecord(
            type="PoisonMessage",
            message="delivered 4 times; ...",
            attempts=4,
            kind="worker_lost",
        ),
    )
    result = evaluate(
        submission(),
        TASK,
        {"text": poisoned, "judge": FAILED, "graph": GRAPH},
    )
    assert result.status == "failed"
    assert result.error == ErrorRecord(
        type="PoisonMessage",
        tier="text",
        message="delivered 4 times; ...",
        attempts=4,
        kind="worker_lost",
    )
    text_gap = result.missing["text"].error
    assert text_gap is not None and text_gap.type == "PoisonMessage"
    kept = result.scores.tiers  # kept for inspection
    assert kept.graph == GRAPH.result and kept.text is None and kept.judge is None


def test_only_a_poisoned_tier_fails_an_evaluation() -> None:
    result = evaluate(
        submission(),
        TASK,
        {"text": TEXT, "judge": FAILED, "graph": GRAPH},
    )
    assert result.error is None


def test_scylla_applies_to_variants_and_derives_pass_from_the_criteria() -> None:
    tiers = {"text": TEXT, "judge": JUDGE, "graph": GRAPH}
    plain = evaluate(submission(), TASK, tiers)
    assert plain.scores.scylla is None and plain.scores.suite is None
    failing = submission(variant="T1", run_index=3, evidence={"success": False})
    scylla = evaluate(failing, TASK, tiers).scores.scylla
    assert scylla is not None
    # no_errors fails -> pass_rate 0; impl_rate = mean judge rubric = (0.5+0.75+1)/3 = 0.75
    assert scylla.pass_rate == 0.0 and scylla.impl_rate == pytest.approx(0.75)
    assert scylla.composite == pytest.approx(0.375) and scylla.grade == "F"
    assert scylla.variant == "T1" and scylla.run_index == 3
    assert scylla.cost_usd is None and scylla.cost_of_pass is None  # no cost, no price
    priced = submission(
        variant="T1",
        evidence={"success": False},
        usage={"input_tokens": 1000, "output_tokens": 100},
    )
    scylla = evaluate(priced, TASK, tiers).scores.scylla
    assert scylla is not None
    # gpt-4o: (1000 x 5 + 100 x 15) / 1e6 = 0.0065; never passing -> cost of pass is infinite
    assert scylla.cost_usd == pytest.approx(0.0065) and scylla.cost_of_pass == math.inf


def test_an_explicit_impl_rate_wins_over_the_judge() -> None:
    sub = submission(variant="T0", passed=True, impl_rate=0.85)
    scylla = evaluate(sub, TASK, {"judge": JUDGE}).scores.scylla
    assert scylla is not None
    assert scylla.composite == pytest.approx(0.925) and scylla.grade == "B"


def test_the_suite_gate_applies_when_the_task_requires_scenarios() -> None:
    task = TASK.model_copy(update={"required_scenarios": ["CORE-1"]})
    result = evaluate(submission(), task, {})
    suite = result.scores.suite
    assert suite is not None
    assert suite.passed is False and suite.missing_required == ("CORE-1",)


def test_a_rubric_the_judge_could_not_answer_makes_the_composite_partial() -> None:
    budget = TierOutcome(
        tier="judge",
        status="ok",
        result=JudgeResult(
            scores={rubric: None for rubric in RUBRICS},
            failed=False,
            rubrics=tuple(
                RubricResult(rubric=rubric, status="skipped", skip_reason="budget")
                for rubric in RUBRICS
            ),
        ),
    )
    result = evaluate(submission(), REVIEW, {"text": TEXT, "judge": budget, "graph": GRAPH})
    peer = result.scores.peerread
    assert peer is not None and peer.partial and peer.missing == RUBRICS
    assert peer.not_reported == ()  # not the submitter's omission, and never a 0


TEXT_ONLY = Task.model_validate(  # a review task that describes no trace
    {"id": "t", "kind": "peerread", "reference_outputs": ["A careful review."]}
)
NO_TRACE = TierOutcome(tier="graph", status="skipped", reason="the submission has no trace")


def test_a_text_only_review_task_leaves_the_trace_inputs_out_never_zero() -> None:
    result = evaluate(submission(), TEXT_ONLY, {"text": TEXT, "judge": JUDGE, "graph": NO_TRACE})
    peer = result.scores.peerread
    assert peer is not None and not peer.partial
    assert peer.not_reported == ()
    assert set(peer.missing) == {"coordination_quality", "tool_efficiency", "planning_rationality"}
    # renormalised, no zeroes; the judge's review rubrics count for a text-only task
    assert peer.composite == pytest.approx((TIME + 0 + 0.6 + 0.5 + 0.75) / 5)


def test_without_a_judge_a_text_only_task_is_scored_on_tier_1_alone() -> None:
    result = evaluate(submission(), TEXT_ONLY, {"text": TEXT, "judge": SKIPPED, "graph": NO_TRACE})
    peer = result.scores.peerread
    assert peer is not None and peer.composite == pytest.approx((TIME + 0 + 0.6) / 3)


def test_a_trace_sent_to_a_text_only_task_does_not_change_its_inputs() -> None:
    traced = evaluate(submission(), TEXT_ONLY, {"text": TEXT, "judge": JUDGE, "graph": GRAPH})
    bare = evaluate(submission(), TEXT_ONLY, {"text": TEXT, "judge": JUDGE, "graph": NO_TRACE})
    assert traced.scores.peerread is not None and bare.scores.peerread is not None
    assert traced.scores.peerread.composite == bare.scores.peerread.composite


def test_a_task_declares_the_inputs_it_asks_for() -> None:
    asks = Task.model_validate(
        {
            "id": "t",
            "kind": "peerread",
            "reference_outputs": ["A careful review."],
            "inputs": ["output_similarity", "coordination_quality"],
        }
    )
    peer = evaluate(submission(), asks, {"text": TEXT, "judge": JUDGE, "graph": NO_TRACE})
    assert peer.scores.peerread is not None
    assert set(peer.scores.peerread.used) == {"output_similarity", "coordination_quality"}
    assert peer.scores.peerread.not_reported == ("coordination_quality",)  # asked for, absent
    assert peer.scores.peerread.composite == pytest.approx(0.6 / 2)


@pytest.mark.parametrize("inputs", [[], ["coordination"]])
def test_a_task_declaring_no_or_unknown_inputs_is_refused_naming_the_field(
    inputs: list[str],
) -> None:
    with pytest.raises(ValueError, match="inputs"):
        Task.model_validate({"id": "t", "inputs": inputs})


CALIBRATED = TierOutcome(
    tier="text",
    status="ok",
    result=TextResult(
        cosine=0.3,
        jaccard=0.2,
        semantic=0.4,
        references=2,
        overall_similarity=0.3,
        task_success=1.0,
        tier_score=0.3,
        reference_agreement=0.4,
        calibrated_similarity=0.75,
    ),
)


def test_the_composite_reads_similarity_relative_to_the_references_and_keeps_the_raw() -> None:
    result = evaluate(submission(), TEXT_ONLY, {"text": CALIBRATED, "judge": JUDGE})
    peer = result.scores.peerread
    assert peer is not None
    assert peer.inputs["output_similarity"] == 0.75
    assert peer.raw_similarity == 0.3 and peer.reference_agreement == 0.4
    assert peer.composite == pytest.approx((TIME + 1.0 + 0.75 + 0.5 + 0.75) / 5)


def test_the_composite_reads_what_the_run_did_not_copy_and_carries_the_mark() -> None:
    copied = CALIBRATED.model_copy(
        update={
            "result": CALIBRATED.text.model_copy(  # type: ignore[union-attr]
                update={"original_similarity": 0.1, "copy_note": "copies reference 1: 95%"}
            )
        }
    )
    peer = evaluate(submission(), TEXT_ONLY, {"text": copied, "judge": SKIPPED}).scores.peerread
    assert peer is not None
    assert peer.inputs["output_similarity"] == 0.1
    assert peer.copied == "copies reference 1: 95%"


def test_without_a_judge_the_peerread_score_says_it_cannot_tell_a_review_from_a_summary() -> None:
    unjudged = evaluate(submission(), TEXT_ONLY, {"text": CALIBRATED, "judge": SKIPPED})
    judged = evaluate(submission(), TEXT_ONLY, {"text": CALIBRATED, "judge": JUDGE})
    assert unjudged.scores.peerread is not None and judged.scores.peerread is not None
    assert "cannot tell a review from a summary of the paper" in (
        unjudged.scores.peerread.note or ""
    )
    assert judged.scores.peerread.note is None


def test_the_price_source_stored_at_submit_is_kept_not_priced_again() -> None:
    sub = submission(usage={"total_tokens": 1100, "input_tokens": 1000, "output_tokens": 100})
    stored = PriceSource(origin="genai-prices", entry="openai:gpt-4o", version="0.0.1")
    result = evaluate_submission(
        sub, Task(id="t"), {}, BASELINE, PROFILE, cost_usd=0.0065, priced_by=stored
    )
    assert result.scores.cost == RunCost(usd=0.0065, priced_by=stored)


def test_a_row_stored_without_its_price_source_is_priced_again() -> None:
    sub = submission(usage={"total_tokens": 1100, "input_tokens": 1000, "output_tokens": 100})
    cost = price_submission(sub, PROFILE)
    assert cost == pytest.approx(0.0065)  # the profile's gpt-4o: $5 / $15 per Mtok
    found = evaluate_submission(sub, Task(id="t"), {}, BASELINE, PROFILE, cost_usd=cost).scores
    assert found.cost == RunCost(usd=cost, priced_by=PriceSource(origin="profile", entry="gpt-4o"))
    moved = evaluate_submission(sub, Task(id="t"), {}, BASELINE, PROFILE, cost_usd=1.0).scores
    assert moved.cost == RunCost(usd=1.0, priced_by=None)  # prices changed since: unknown


@pytest.mark.parametrize("below", [0.79, 0.75])
def test_a_review_just_below_the_success_line_keeps_most_of_its_composite(below: float) -> None:
    def composite(similarity: float) -> float:
        text = CALIBRATED.model_copy(
            update={
                "result": CALIBRATED.text.model_copy(  # type: ignore[union-attr]
                    update={
                        "original_similarity": similarity,
                        "task_success": success_of(similarity, PROFILE.text),
                    }
                )
            }
        )
        peer = evaluate(submission(), TEXT_ONLY, {"text": text, "judge": SKIPPED}).scores.peerread
        assert peer is not None and peer.composite is not None
        return peer.composite

    at_line, just_below = composite(0.8), composite(below)
    # the spec's step took the whole task-success input away (about 0.71 -> 0.29 in a real case)
    assert just_below > 0.8 * at_line
    assert at_line - just_below <= (0.8 - below) * (1 + 1 / PROFILE.text.success_ramp) / 3 + 1e-9
