"""A run that instructs its evaluator, through tier 1 (both passes, the bundled model), tier 2
(patterns only, a judge model that obeys what it reads) and the merge's scoring: it never
scores higher than the same run without the instruction, or it is held for review.

- an attempt the patterns mark: tier 2 judges without it, so the judge's scores are the clean
  run's; tier 1's similarity is the clean run's too;
- an attempt only the meaning pass marks: tier 2 read it as written and was steered, so the run
  is held (`INSTRUCTIONS_JUDGED_AS_WRITTEN`): out of ranks until a person accepts it. Without
  the hold (tier 1 storing no marks) it would score 1.0 against the clean run's 0.25.
"""

from __future__ import annotations

import pytest
from tests.unit.judge.judge_helpers import scripted_judge, submission
from tests.unit.judge.test_judge_marked import ATTEMPTS, BY_MEANING_ONLY, REVIEW, obedient

from evalq.core.applicable import NO_REFERENCES
from evalq.core.profile import load_profile
from evalq.core.results import EvaluationScores, TierOutcome
from evalq.core.schemas import Task, Tier
from evalq.scoring.arena import compute_baseline
from evalq.scoring.evaluation import evaluate_submission
from evalq.scoring.injection import BY_MEANING, INSTRUCTIONS_JUDGED_AS_WRITTEN
from evalq.store.queries import Job
from evalq.tasks import tiers

PROFILE = load_profile()
REFERENCES = (
    "The gate is a sound idea, but the evaluation uses one dataset and lacks an ablation.",
    "Clear writing; the related work misses recent papers; more experiments are needed.",
)


def task(references: tuple[str, ...] = REFERENCES) -> Task:
    return Task(
        id="t1",
        category="data_analysis",
        context="The paper proposes a gated method and tests it on one dataset.",
        reference_outputs=list(references),
    )


def evaluated(
    output: str, monkeypatch: pytest.MonkeyPatch, the_task: Task | None = None
) -> tuple[EvaluationScores, dict[Tier, TierOutcome]]:
    judge = scripted_judge(obedient)
    monkeypatch.setattr(tiers, "judge_for", lambda profile, settings: judge)
    job = Job(submission(output), the_task or task(), PROFILE, cost_usd=None)
    outcomes: dict[Tier, TierOutcome] = {
        "text": tiers.compute_text(job),
        "judge": tiers.compute_judge(job),
        "graph": tiers.compute_graph(job),
    }
    baseline = compute_baseline([], PROFILE.arena)
    result = evaluate_submission(
        job.submission, job.task, outcomes, baseline, PROFILE, cost_usd=None
    )
    return result.scores, outcomes


def inserted(attempt: str) -> str:
    middle = REVIEW.index("The related")
    return f"{REVIEW[:middle]}{attempt}\n{REVIEW[middle:]}"


@pytest.mark.parametrize("attempt", ATTEMPTS)
def test_a_pattern_attempt_scores_what_the_clean_run_scores(
    attempt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    clean, _ = evaluated(REVIEW, monkeypatch)
    injected, outcomes = evaluated(inserted(attempt), monkeypatch)
    assert clean.injection == () and clean.review.flags == ()
    assert injected.review.flags == ()  # both tiers left it out: nothing to hold
    assert [m.sentence for m in injected.injection] == [" ".join(attempt.split())]
    assert injected.judge == clean.judge
    assert injected.tiers.text is not None and clean.tiers.text is not None
    assert injected.tiers.text.semantic == pytest.approx(clean.tiers.text.semantic, abs=1e-6)
    assert outcomes["text"].marks() == outcomes["judge"].marks()


def test_a_meaning_only_attempt_that_steered_the_judge_holds_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clean, _ = evaluated(REVIEW, monkeypatch)
    injected, outcomes = evaluated(inserted(BY_MEANING_ONLY), monkeypatch)
    assert injected.judge["technical_accuracy"] == 1.0 > clean.judge["technical_accuracy"]
    assert injected.review.flags == (INSTRUCTIONS_JUDGED_AS_WRITTEN,)
    [mark] = injected.injection
    assert mark.sentence == BY_MEANING_ONLY and mark.kind == BY_MEANING
    assert mark.probability is not None and mark.probability >= 0.8
    assert outcomes["judge"].marks() == ()  # tier 2 ran the patterns only
    # tier 1 read the review without it
    assert injected.tiers.text is not None and clean.tiers.text is not None
    assert injected.tiers.text.semantic == pytest.approx(clean.tiers.text.semantic, abs=1e-6)


def test_a_task_without_references_still_stores_tier_1s_marks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    injected, outcomes = evaluated(inserted(BY_MEANING_ONLY), monkeypatch, task(()))
    text = outcomes["text"]
    assert text.status == "skipped" and text.reason == NO_REFERENCES
    assert [m.kind for m in text.marks()] == [BY_MEANING]
    stored = TierOutcome.from_stored("text", "skipped", *text.stored())
    assert stored.marks() == text.marks()
    assert injected.review.flags == (INSTRUCTIONS_JUDGED_AS_WRITTEN,)
    assert [m.kind for m in injected.injection] == [BY_MEANING]
