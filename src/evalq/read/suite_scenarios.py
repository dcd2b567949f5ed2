"""A suite run's scenarios as a person reads them: each one's score from the stored gate, whether
it passed at the profile's threshold, and what it missed or broke (the run page lists these)."""

from __future__ import annotations

from dataclasses import dataclass

from evalq.core.schemas import Submission, Task
from evalq.read.submission import SubmissionResult
from evalq.scoring.suite.scenario import reaches


@dataclass(frozen=True)
class ScenarioRow:
    """One scenario of a suite run as its page lists it."""

    id: str
    category: str
    capability: str | None
    score: float | None
    passed: bool | None
    required: bool
    missed: list[str]
    violations: list[str]
    latency_ms: float | None


def suite_scenarios(
    result: SubmissionResult, submission: Submission, task: Task, *, threshold: float
) -> list[ScenarioRow]:
    """A suite run's scenarios in submitted order: score (from the stored gate), passed at
    ``threshold`` (the profile's ``scenario_pass_threshold``), required by the task or not, the
    expected behaviours it missed and the must-not rules it broke."""
    suite = result.scores.suite if result.scores is not None else None
    scores = suite.metrics.get("scenario_scores", {}) if suite is not None else {}
    required = set(task.required_scenarios)
    rows = []
    for s in submission.scenarios:
        score = scores.get(s.id)
        observed = set(s.observed_behaviors)
        rows.append(
            ScenarioRow(
                id=s.id,
                category=s.category,
                capability=s.capability,
                score=score,
                passed=None if score is None else reaches(score, threshold),
                required=s.id in required,
                missed=[b for b in s.expected_behaviors if b not in observed],
                violations=list(s.must_not_violations),
                latency_ms=s.latency_ms,
            )
        )
    return rows
