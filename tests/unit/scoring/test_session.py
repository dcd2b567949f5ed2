"""A session scored as a unit (`evalq.scoring.session`): turn success by the task's rules,
the last turn decides, turns to success, tool use summed over the session."""

from __future__ import annotations

from typing import Any

import pytest

from evalq.core.pricing import price_submission
from evalq.core.profile import Profile
from evalq.core.results import EvaluationScores
from evalq.core.schemas import Submission, Task
from evalq.core.sessions import SessionTurn, session_of
from evalq.scoring.arena import compute_baseline
from evalq.scoring.evaluation import evaluate_submission
from evalq.scoring.session import score_session, session_turn

PROFILE = Profile()
BASELINE = compute_baseline([], PROFILE.arena)
TASK = Task.model_validate(
    {"id": "t", "category": "debugging", "success_criteria": [{"type": "no_errors"}]}
)
NO_CRITERIA = Task.model_validate({"id": "t", "category": "debugging"})


def submission(**changes: Any) -> Submission:
    data: dict[str, Any] = {
        "id": "s",
        "task_id": "t",
        "tool": "aider",
        "model": "gpt-4o",
        "usage": {"total_tokens": 1000, "tool_calls": 2, "execution_time": 30.0},
    }
    return Submission.model_validate(data | changes)


def scores_of(sub: Submission, task: Task) -> EvaluationScores:
    cost = price_submission(sub, PROFILE)
    result = evaluate_submission(sub, task, {}, BASELINE, PROFILE, cost_usd=cost)  # type: ignore[arg-type]
    return result.scores


def turn(task: Task, *, ok: bool, status: str = "done", **changes: Any) -> SessionTurn:
    sub = submission(evidence={"success": ok, "errors": [] if ok else ["timeout"]}, **changes)
    return session_turn(task, sub, scores_of(sub, task), status)


def test_a_turn_succeeds_by_the_tasks_criteria_and_a_failed_evaluation_never_does() -> None:
    assert turn(TASK, ok=True).success
    assert not turn(TASK, ok=False).success
    assert not turn(TASK, ok=True, status="failed").success
    # with no criteria, the run's own word: evidence.success
    assert turn(NO_CRITERIA, ok=True).success
    assert not turn(NO_CRITERIA, ok=False).success
    # an arena task's turn value is its Arena overall on 0..1
    value = turn(TASK, ok=True).value
    assert value is not None and 0.0 <= value <= 1.0


def test_the_last_turn_decides_and_turns_to_success_counts_from_one() -> None:
    trace = {"steps": [{"agent": "a", "tool": "search"}, {"agent": "a", "tool": "read"}]}
    turns = [
        turn(TASK, ok=False, id="t1"),
        turn(TASK, ok=True, id="t2", trace=trace),
        turn(TASK, ok=True, id="t3"),
    ]
    scores = score_session(turns)
    assert (scores.turns, scores.passed, scores.turns_to_success) == (3, True, 2)
    assert scores.success_rate == pytest.approx(2 / 3)
    assert (scores.tool_calls, scores.tool_calls_per_turn) == (6, 2.0)
    assert scores.tools == ("read", "search")
    values = [t.value for t in turns if t.value is not None]
    assert scores.score == pytest.approx(sum(values) / len(values))
    # a conversation that ends on a failure did not pass, whatever came before
    ended_badly = score_session([*turns, turn(TASK, ok=False, id="t4")])
    assert (ended_badly.passed, ended_badly.turns_to_success) == (False, 2)
    never = score_session([turn(TASK, ok=False, id="x")])
    assert (never.passed, never.turns_to_success, never.success_rate) == (False, None, 0.0)


def test_degraded_or_failed_turns_are_named_and_an_empty_session_is_refused() -> None:
    scores = score_session([turn(TASK, ok=True, id="a", status="degraded")])
    assert scores.failed_turns == ("a",)
    with pytest.raises(ValueError, match="at least one turn"):
        score_session([])


def test_a_runs_session_is_its_conversation_id_else_its_session_id() -> None:
    assert session_of({"gen_ai.conversation.id": "c1", "session.id": "s1"}) == "c1"
    assert session_of({"session.id": " s1 "}) == "s1"
    assert session_of({"gen_ai.conversation.id": "", "session.id": 5}) is None
    assert session_of(None) is None
