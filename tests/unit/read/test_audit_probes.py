"""The verifier audit's probes against hand-made tasks: which checks an empty output, the task
text echoed or a refusal pass, and that sound checks refuse all three."""

from __future__ import annotations

from typing import Any

from evalq.core.profile import load_profile
from evalq.core.schemas import Evidence, Task, TestResult
from evalq.read.audit_probes import REFUSAL, Probe, audit_outcome, own_probes

TEXT = load_profile().text
REVIEW = (
    "The paper proposes a gating mechanism for salience maps and evaluates it on three "
    "benchmarks; the ablations are thin and the baselines are dated."
)


def _audit(kind: str = "arena", **fields: Any) -> tuple[str, list[str]]:
    task = Task.model_validate({"id": "t", **fields})
    status, outcomes, _ = audit_outcome(task, kind, TEXT, own_probes(task))  # type: ignore[arg-type]
    return status, [o.probe for o in outcomes if o.passed]


def test_a_criterion_an_empty_run_meets_leaves_the_task_unverified() -> None:
    status, passed = _audit(success_criteria=[{"type": "no_errors"}])
    assert status == "unverified"
    assert passed == ["empty output", "echoed task text", "refusal"]


def test_no_criteria_and_no_references_accept_anything() -> None:
    assert _audit()[0] == "unverified"


def test_criteria_that_need_the_work_done_refuse_every_probe() -> None:
    criteria = [
        {"type": "file_exists", "file_path": "out.csv"},
        {"type": "tests_pass"},
        {"type": "no_errors"},
    ]
    assert _audit(success_criteria=criteria) == ("verified", [])


def test_references_refuse_the_probes_unless_the_threshold_accepts_anything() -> None:
    assert _audit("peerread", reference_outputs=[REVIEW])[0] == "verified"
    # tier 1 discounts what an output copies from the references and the task's context, so
    # neither a reference sent back nor the task text echoed passes
    assert _audit("peerread", reference_outputs=[REFUSAL, REVIEW]) == ("verified", [])
    echoed = _audit(
        "peerread", reference_outputs=[REVIEW], context=f"Review this paper. Example: {REVIEW}"
    )
    assert echoed == ("verified", [])
    # a profile whose success threshold is 0 accepts every output
    task = Task.model_validate({"id": "t", "reference_outputs": [REVIEW]})
    loose = TEXT.model_copy(update={"success_threshold": 0.0, "success_ramp": 0.0})
    status, outcomes, _ = audit_outcome(task, "peerread", loose, own_probes(task))
    assert status == "unverified" and all(o.task_success == 1.0 for o in outcomes)


def test_another_task_s_run_that_meets_loose_criteria_is_named() -> None:
    task = Task.model_validate({"id": "t", "success_criteria": [{"type": "tests_pass"}]})
    borrowed = Probe(
        "another task's best run",
        "done",
        Evidence(tests=[TestResult(name="test_other", passed=True)]),
        "other/run-1",
    )
    status, outcomes, reason = audit_outcome(task, "arena", TEXT, [*own_probes(task), borrowed])
    assert status == "unverified" and [o.passed for o in outcomes] == [False, False, False, True]
    assert reason.startswith("another task's best run (other/run-1) passed")


def test_a_suite_has_nothing_to_probe() -> None:
    assert _audit("suite", required_scenarios=["s1"]) == ("not audited", [])
