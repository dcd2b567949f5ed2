"""Which tiers apply to a submission: decided once, where it is submitted.

A tier that cannot apply (no reference outputs, no trace, no judge configured) is recorded as
skipped when the submission is stored and left out of its chord, so no worker spends a task
finding out; the tier tasks give the same reasons if they ever meet such a submission (a chord
sent before this rule, a settings change between submit and run).
"""

from __future__ import annotations

from evalq.core.results import TierOutcome
from evalq.core.schemas import (
    PEERREAD_INPUTS,
    TIERS,
    TRACE_INPUTS,
    PeerReadInput,
    Submission,
    Task,
    Tier,
)

NO_REFERENCES = "the task has no reference outputs"
NO_TRACE = "the submission has no trace"
NO_JUDGE = "no judge configured (EVALQ_JUDGE_MODEL unset)"


def expects_trace(task: Task) -> bool:
    """Does the task describe a trace (a reference tool graph or optimal tools)?"""
    return task.reference_tool_graph is not None or bool(task.optimal_tools)


def applicable_inputs(task: Task) -> tuple[PeerReadInput, ...]:
    """The PeerRead inputs ``task`` asks for, in `PEERREAD_INPUTS` order.

    The task's own ``inputs`` when it declares them. Otherwise every input, less the trace
    inputs (`TRACE_INPUTS`) when the task describes no trace (`expects_trace`): a text-only
    review task is not scored on coordination, tool use or planning it never asked for. An
    input not asked for is left out of every run's composite (renormalised), never given 0.
    """
    if task.inputs is not None:
        return tuple(name for name in PEERREAD_INPUTS if name in task.inputs)
    if expects_trace(task):
        return PEERREAD_INPUTS
    return tuple(name for name in PEERREAD_INPUTS if name not in TRACE_INPUTS)


def skipped_tiers(
    submission: Submission, task: Task, *, judge_configured: bool
) -> list[TierOutcome]:
    """The skipped outcome of each tier that cannot apply to ``submission`` on ``task``.

    ``judge_configured`` is whether ``EVALQ_JUDGE_MODEL`` is set where the submission is stored;
    every evalq process of a deployment shares its settings (docs/deploy.md).

    Tier 1 is skipped without references only when no judge is configured: with a judge, it
    still reads the output for instructions to the evaluator (`evalq.scoring.injection`, by
    meaning on its model) and stores the marks with its skipped similarity, which the merge
    reads to hold a run the judge scored with an instruction only that pass found.
    """
    reasons: dict[Tier, str] = {}
    if not task.reference_outputs and not judge_configured:
        reasons["text"] = NO_REFERENCES
    if not judge_configured:
        reasons["judge"] = NO_JUDGE
    if submission.trace is None:
        reasons["graph"] = NO_TRACE
    return [TierOutcome(tier=tier, status="skipped", reason=why) for tier, why in reasons.items()]


def remaining_tiers(skipped: list[TierOutcome]) -> list[Tier]:
    """The tiers a new submission's chord runs: those not among its ``skipped`` outcomes."""
    left_out = {outcome.tier for outcome in skipped}
    return [tier for tier in TIERS if tier not in left_out]
