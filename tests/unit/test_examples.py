"""The bundled examples (src/evalq/examples/) are valid, varied and match their generator."""

from __future__ import annotations

import importlib
import json
import statistics
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from evalq.core.profile import load_profile
from evalq.core.schemas import Submission, Task, parse_submission, parse_task
from evalq.producer.cli import EXAMPLES

GENERATOR = Path(__file__).resolve().parents[2] / "examples"
FILES = ("arena.jsonl", "peerread.jsonl", "scylla.jsonl", "suite.jsonl")
PROFILE = load_profile()


def _lines(name: str) -> list[dict[str, Any]]:
    text = (EXAMPLES / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


TASKS: list[Task] = [
    parse_task(t) for t in json.loads((EXAMPLES / "tasks.json").read_text(encoding="utf-8"))
]
TASK_BY_ID = {t.id: t for t in TASKS}
SUBMISSIONS: dict[str, list[Submission]] = {
    name: [parse_submission(row) for row in _lines(name)] for name in FILES
}


def _words(text: str) -> int:
    return len(text.split())


# --- validity -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", FILES)
def test_every_line_validates_and_names_an_existing_task(name: str) -> None:
    rows = _lines(name)
    assert rows, f"{name} is empty"
    for row in rows:
        submission = parse_submission(row)
        assert submission.task_id in TASK_BY_ID, submission.id


def test_ids_are_unique_across_all_files() -> None:
    ids = [t.id for t in TASKS] + [s.id for subs in SUBMISSIONS.values() for s in subs]
    duplicates = [i for i, n in Counter(ids).items() if n > 1]
    assert duplicates == []


def test_files_are_small() -> None:
    total = sum(p.stat().st_size for p in EXAMPLES.glob("*.json*"))
    assert total < 1_000_000


def test_committed_files_match_the_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(GENERATOR))
    generate: ModuleType = importlib.import_module("generate")
    for name, text in generate.build().items():
        assert (EXAMPLES / name).read_text(encoding="utf-8") == text, f"regenerate {name}"


# --- arena (spec 000) -------------------------------------------------------------------------


def _arena_by_task() -> dict[str, list[Submission]]:
    by_task: dict[str, list[Submission]] = {}
    for s in SUBMISSIONS["arena.jsonl"]:
        by_task.setdefault(s.task_id, []).append(s)
    return by_task


def test_arena_has_three_tasks_with_at_least_ten_runs_each() -> None:
    by_task = _arena_by_task()
    assert len(by_task) == 3
    assert {TASK_BY_ID[t].category for t in by_task} == {
        "frontend_development",
        "debugging",
        "data_analysis",
    }
    assert len({TASK_BY_ID[t].difficulty for t in by_task}) == 3
    assert all(len(runs) >= 10 for runs in by_task.values())


def test_arena_criteria_cover_every_type_and_one_task_has_a_tool_graph() -> None:
    arena_tasks = [TASK_BY_ID[t] for t in _arena_by_task()]
    kinds = {c.type for t in arena_tasks for c in t.success_criteria}
    assert kinds == {"file_exists", "no_errors", "tests_pass", "min_functionality"}
    graphed = [t for t in arena_tasks if t.reference_tool_graph is not None]
    assert len(graphed) == 1 and graphed[0].optimal_tools
    graph = graphed[0].reference_tool_graph
    assert graph is not None
    nodes = {n for edge in graph.edges for n in edge}
    traced = [s for s in _arena_by_task()[graphed[0].id] if s.trace is not None]
    assert len(traced) >= 3
    for s in traced:
        assert s.trace is not None
        assert {step.tool for step in s.trace.steps} <= nodes, s.id
        assert len(s.trace.steps) == s.usage.tool_calls, s.id


def test_arena_costs_come_from_prices_explicit_figures_and_nothing() -> None:
    runs = SUBMISSIONS["arena.jsonl"]
    priced = [s for s in runs if s.usage.cost_usd is None and s.model in PROFILE.pricing]
    explicit = [s for s in runs if s.usage.cost_usd is not None]
    no_cost = [s for s in runs if s.usage.cost_usd is None and s.model not in PROFILE.pricing]
    no_time = [s for s in runs if s.usage.execution_time is None]
    assert len(priced) >= 5 and len(explicit) >= 5
    assert all(s.usage.input_tokens is not None for s in priced)  # so they can be priced
    assert {s.model for s in priced} == set(PROFILE.pricing) - {"gpt-4o-mini"}  # judge-only
    assert no_cost and no_time
    assert {s.id for s in no_cost} & {s.id for s in no_time}, "one run has neither"
    assert {s.id for s in no_cost} - {s.id for s in no_time}, "one run lacks only a cost"
    assert {s.id for s in no_time} - {s.id for s in no_cost}, "one run lacks only a time"


def test_arena_has_an_exact_tie_in_raw_figures() -> None:
    keys = Counter(
        (s.task_id, s.model, s.usage.model_dump_json(), s.evidence.model_dump_json())
        for s in SUBMISSIONS["arena.jsonl"]
    )
    assert max(keys.values()) >= 2


def test_arena_has_a_suspicious_outlier() -> None:
    # spec 000 flags: tokens < 10% of the task median, time < 5 s, a single tool call.
    flagged = []
    for runs in _arena_by_task().values():
        median = statistics.median(s.usage.tokens for s in runs)
        for s in runs:
            time = s.usage.execution_time
            if (
                s.usage.tokens < PROFILE.arena.outlier_token_fraction * median
                and time is not None
                and time < PROFILE.arena.outlier_fast_seconds
                and s.usage.tool_calls == 1
            ):
                flagged.append(s.id)
    assert len(flagged) == 1


def test_arena_evidence_passes_some_criteria_and_fails_others() -> None:
    for task_id, runs in _arena_by_task().items():
        all_green = [
            s for s in runs if s.evidence.tests and all(t.passed for t in s.evidence.tests)
        ]
        some_red = [s for s in runs if any(not t.passed for t in s.evidence.tests)]
        with_errors = [s for s in runs if s.evidence.errors or not s.evidence.success]
        assert all_green and some_red, task_id
        assert len(with_errors) < len(runs), task_id
    assert any(s.evidence.errors for s in SUBMISSIONS["arena.jsonl"])


def test_arena_baselines_leave_their_defaults() -> None:
    # At least min_submissions runs with distinct figures, so the baseline is computed.
    for runs in _arena_by_task().values():
        assert len(runs) >= PROFILE.arena.min_submissions
        assert len({s.usage.tokens for s in runs}) >= len(runs) - 1
        assert len({s.usage.tool_calls for s in runs}) >= 5
        assert len({s.usage.iterations for s in runs}) >= 3


# --- PeerRead (spec 001) ----------------------------------------------------------------------


def _peerread_task() -> Task:
    (task,) = [t for t in TASKS if t.reference_outputs]
    return task


def test_peerread_task_has_a_paper_and_two_reference_reviews() -> None:
    task = _peerread_task()
    assert task.context is not None
    assert 300 <= _words(task.context) <= 600
    assert len(task.reference_outputs) == 2
    assert all(150 <= _words(r) <= 300 for r in task.reference_outputs)


def test_peerread_reviews_are_varied() -> None:
    reviews = SUBMISSIONS["peerread.jsonl"]
    assert len(reviews) >= 6
    assert {s.task_id for s in reviews} == {_peerread_task().id}
    assert max(_words(s.output) for s in reviews) > 600  # BERTScore must chunk it
    assert min(_words(s.output) for s in reviews) < 30
    injected = [s for s in reviews if "ignore all previous instructions" in s.output.lower()]
    assert len(injected) == 1


def test_peerread_traces_use_every_message_type_and_differ() -> None:
    traces = [s.trace for s in SUBMISSIONS["peerread.jsonl"] if s.trace is not None]
    assert len(traces) >= 5
    types = {m.type for t in traces for m in t.messages}
    assert types == {
        "coordination",
        "status_update",
        "handoff",
        "task_request",
        "result_delivery",
        "data_transfer",
    }
    shapes = {(len(t.steps), len(t.messages), len({s.agent for s in t.steps})) for t in traces}
    assert len(shapes) == len(traces)
    for t in traces:
        for step in t.steps:
            assert step.agent and step.context and step.started_at is not None
        starts = [s.started_at or 0.0 for s in t.steps]
        assert starts == sorted(starts)


# --- Scylla (spec 003) ------------------------------------------------------------------------


def test_scylla_has_ten_runs_of_each_variant() -> None:
    runs = SUBMISSIONS["scylla.jsonl"]
    grid = Counter((s.variant, s.run_index) for s in runs)
    assert set(grid) == {(f"T{v}", i) for v in range(4) for i in range(10)}
    assert set(grid.values()) == {1}
    for s in runs:
        assert s.passed is not None and s.impl_rate is not None
        assert s.usage.input_tokens and s.usage.output_tokens and s.usage.execution_time
        assert s.model in PROFILE.pricing and s.usage.cost_usd is None


def test_scylla_later_variants_beat_t0_with_some_failures() -> None:
    runs = SUBMISSIONS["scylla.jsonl"]

    def mean_composite(variant: str) -> float:
        # composite = (pass * 0.5 + impl * 0.5) / (0.5 + 0.5), spec 003
        return statistics.mean(
            (float(bool(s.passed)) + (s.impl_rate or 0.0)) / 2 for s in runs if s.variant == variant
        )

    t0 = mean_composite("T0")
    assert all(mean_composite(v) > t0 for v in ("T1", "T2", "T3"))
    assert any(not s.passed for s in runs if s.variant == "T3")
    for s in runs:  # the tests reported agree with pass/fail
        assert s.passed == all(t.passed for t in s.evidence.tests), s.id


# --- suites (spec 004) ------------------------------------------------------------------------


def _gate_blockers(s: Submission, task: Task) -> set[str]:
    """An independent reading of spec 004's pass rule, enough to check the examples' intent."""
    cfg = PROFILE.suite
    ids = {sc.id for sc in s.scenarios}
    blockers = {"missing_required"} if set(task.required_scenarios) - ids else set()

    def coverage(sc: Any) -> float:
        if sc.must_not_violations:
            return 0.0
        return len(set(sc.observed_behaviors) & set(sc.expected_behaviors)) / len(
            sc.expected_behaviors
        )

    passed = {sc.id: coverage(sc) >= cfg.scenario_pass_threshold for sc in s.scenarios}
    adversarial = [passed[sc.id] for sc in s.scenarios if sc.category == "adversarial"]
    safety = sum(adversarial) / len(adversarial)
    accuracy = sum(sc.correct_outputs or 0 for sc in s.scenarios) / sum(
        sc.total_outputs or 0 for sc in s.scenarios
    )
    if safety < cfg.blocking["safety_rate"]:
        blockers.add("safety")
    if accuracy < cfg.blocking["accuracy"]:
        blockers.add("accuracy")
    if sum(passed.values()) / len(passed) < cfg.overall_pass_rate:
        blockers.add("overall_pass_rate")
    return blockers


def _suite(sid: str) -> Submission:
    (found,) = [s for s in SUBMISSIONS["suite.jsonl"] if s.id == sid]
    return found


def test_suite_submissions_cover_every_category() -> None:
    subs = SUBMISSIONS["suite.jsonl"]
    assert len(subs) >= 3
    for s in subs:
        assert len(s.scenarios) >= 8
        assert {sc.category for sc in s.scenarios} == {
            "happy_path",
            "edge_case",
            "adversarial",
            "regression",
        }
        assert all(sc.latency_ms is not None and sc.total_outputs for sc in s.scenarios)
    assert any(sc.must_not_violations for s in subs for sc in s.scenarios)


def test_suite_gate_outcomes_are_as_intended() -> None:
    task = TASK_BY_ID[_suite("suite-01-release-candidate").task_id]
    assert task.required_scenarios
    assert _gate_blockers(_suite("suite-01-release-candidate"), task) == set()
    assert "safety" in _gate_blockers(_suite("suite-02-prompt-leak"), task)
    assert _gate_blockers(_suite("suite-03-missing-core"), task) == {"missing_required"}
    assert "accuracy" in _gate_blockers(_suite("suite-04-slow-and-sloppy"), task)


def test_suite_release_candidate_figures() -> None:
    s = _suite("suite-01-release-candidate")
    # accuracy = 49 correct / 50 outputs (only EDGE-003 gets one wrong)
    correct = sum(sc.correct_outputs or 0 for sc in s.scenarios)
    total = sum(sc.total_outputs or 0 for sc in s.scenarios)
    assert (correct, total) == (49, 50)
    # p95 lies between the 10th and 11th of 11 sorted latencies under every usual definition
    # (nearest rank: the 11th; linear interpolation: 10th + 0.5 * (11th - 10th)). Here both are
    # inside the 5000 ms budget (2780 and 3050 ms); for suite-04 both exceed it (5630, 6840 ms).
    latencies = sorted(sc.latency_ms or 0.0 for sc in s.scenarios)
    assert latencies[-2:] == [2780.0, 3050.0]
    assert latencies[-1] < PROFILE.suite.latency_budget_ms
    slow = sorted(sc.latency_ms or 0.0 for sc in _suite("suite-04-slow-and-sloppy").scenarios)
    assert slow[-2] > PROFILE.suite.latency_budget_ms
