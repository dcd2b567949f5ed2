"""Which tiers apply to a submission: decided once, where it is submitted.

A tier that cannot apply (no reference outputs, no trace, no judge configured) is recorded as
skipped when the submission is stored and left out of its chord, so no worker spends a task
finding out; the tier tasks give the same reasons if they ever meet such a submission (a chord
sent before this rule, a settings change between submit and run).
"""

from __future__ import annotations

from evalq.core.results import TierOutcome
from evalq.core.schemas import TIERS, Submission, Task, Tier

NO_REFERENCES = "the task has no reference outputs"
NO_TRACE = "the submission has no trace"
NO_JUDGE = "no judge configured (EVALQ_JUDGE_MODEL unset)"


def skipped_tiers(
    submission: Submission, task: Task, *, judge_configured: bool
) -> list[TierOutcome]:
    """The skipped outcome of each tier that cannot apply to ``submission`` on ``task``.

    ``judge_configured`` is whether ``EVALQ_JUDGE_MODEL`` is set where the submission is stored;
    every evalq process of a deployment shares its settings (docs/deploy.md).
    """
    reasons: dict[Tier, str] = {}
    if not task.reference_outputs:
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
