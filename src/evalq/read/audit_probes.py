"""The verifier audit's probes, scored by the task's own checks (pure; docs/audit.md).

A sound task refuses an empty output, its own text echoed back, a refusal, and another task's
best run. Each probe is scored the way a run is: its evidence against the task's success
criteria (`evalq.scoring.arena.correctness`, spec 000's correctness), and its output against
the reference outputs by tier 1 (`evalq.metrics.text.text_result`: similarity, the copy
discount, task success). A probe *passes* when every check the task has accepts it: all its
criteria pass and, with references, task success reaches 1. A task with neither criteria nor
references accepts anything (spec 000 scores correctness 100 without criteria). A suite's
scenarios are reported by the run itself, so there is nothing to probe: "not audited".

The text probes carry the evidence of a run that did nothing and said so: no file, no test, no
error, ``success`` true (what a submitter omitting the evidence sends).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evalq.core.audit import AuditStatus, ProbeName, ProbeOutcome
from evalq.core.profile import TextProfile
from evalq.core.schemas import Evidence, Task, TaskKind
from evalq.scoring.arena.correctness import correctness_score

REFUSAL = "I'm sorry, but I can't help with that request."
"""The refusal probe's output."""


@dataclass(frozen=True)
class Probe:
    """One probe: what it is, its output and evidence, and the run it came from if borrowed."""

    name: ProbeName
    output: str
    evidence: Evidence
    source: str | None = None


def own_probes(task: Task) -> list[Probe]:
    """The probes made from nothing but the task: empty, its text echoed, a refusal."""
    echoed = task.context if task.context else task.id
    return [
        Probe("empty output", "", Evidence()),
        Probe("echoed task text", echoed, Evidence()),
        Probe("refusal", REFUSAL, Evidence()),
    ]


def score_probe(task: Task, text: TextProfile, probe: Probe) -> ProbeOutcome:
    """``probe`` through the task's checks (the semantic similarity left out: no model here)."""
    from evalq.metrics.text import text_result

    correctness = correctness_score(task, probe.evidence)
    criteria = [
        f"{c.type}: {'passed' if c.passed else 'failed'} ({c.reason})" for c in correctness.outcomes
    ]
    success = None
    if task.reference_outputs:
        found = text_result(
            probe.output,
            task.reference_outputs,
            None,
            profile=text,
            semantic=None,
            context=task.context,
        )
        success = found.task_success if found.task_success is not None else 0.0
    passed = all(c.passed for c in correctness.outcomes) and (success is None or success >= 1.0)
    return ProbeOutcome(
        probe=probe.name,
        source=probe.source,
        passed=passed,
        criteria=criteria,
        task_success=success,
    )


def audit_outcome(
    task: Task, kind: TaskKind, text: TextProfile, probes: Sequence[Probe]
) -> tuple[AuditStatus, list[ProbeOutcome], str]:
    """The task's status, every probe's outcome, and the reason in words."""
    if kind == "suite" and not task.success_criteria and not task.reference_outputs:
        reason = "a suite's scenarios are reported by the run itself: nothing to probe"
        return "not audited", [], reason
    outcomes = [score_probe(task, text, p) for p in probes]
    passed = [o for o in outcomes if o.passed]
    if not passed:
        return "verified", outcomes, f"each of {len(outcomes)} probes was refused"
    names = ", ".join(o.probe + (f" ({o.source})" if o.source else "") for o in passed)
    if not task.success_criteria and not task.reference_outputs:
        why = "the task has no success criteria and no reference outputs"
    else:
        why = "its success criteria and references accept it"
    return "unverified", outcomes, f"{names} passed: {why}"
